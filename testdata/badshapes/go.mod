module example.com/badshapes

go 1.26
