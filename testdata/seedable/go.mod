module example.com/seedable

go 1.24
