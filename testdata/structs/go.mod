module example.com/structs

go 1.24
