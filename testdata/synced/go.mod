module example.com/synced

go 1.22
