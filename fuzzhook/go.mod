module fuzzls.dev/fuzzls/fuzzhook

go 1.18
