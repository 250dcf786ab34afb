module example.com/crashers

go 1.26
