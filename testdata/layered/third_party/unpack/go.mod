module example.com/unpack

go 1.26
