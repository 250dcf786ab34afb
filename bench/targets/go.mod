module example.com/benchtargets

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/ulikunitz/xz v0.5.17
	golang.org/x/net v0.63.0
	gopkg.in/yaml.v3 v3.0.1
)

require golang.org/x/image v0.48.0
