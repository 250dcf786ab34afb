package fuzzrt

// EnvHandles passes the worker's two pipe ends on Windows, which has no file
// descriptors 3 and 4 to inherit: "in,out" handle numbers in hex, as
// internal/fuzz's GO_TEST_FUZZ_WORKER_HANDLES. Elsewhere the pipes are fds 3 and 4.
const EnvHandles = "FUZZLS_HANDLES"
