module example.com/strength

go 1.26
