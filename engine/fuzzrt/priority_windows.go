package fuzzrt

// setNice does nothing: the coordinator chose the worker's priority class when it
// started it (see lowerPriority).
func setNice(tid, nice int) {}
