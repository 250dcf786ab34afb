module example.com/multiarg

go 1.26
