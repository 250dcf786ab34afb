module example.com/expr

go 1.22

require fuzzls.dev/fuzzls/fuzzhook v0.0.0

replace fuzzls.dev/fuzzls/fuzzhook => ../../../../fuzzhook
