module example.com/layered

go 1.26

require example.com/unpack v0.0.0

replace example.com/unpack => ./third_party/unpack
