module example.com/benchtargets

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	golang.org/x/net v0.63.0
	gopkg.in/yaml.v3 v3.0.1
)
