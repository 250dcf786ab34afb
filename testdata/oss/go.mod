module example.com/oss

go 1.22
