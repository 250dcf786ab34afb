module example.com/blockers

go 1.24
