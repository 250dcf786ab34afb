// Package structs has a fuzz target that go test cannot run: it takes a struct
// and a type fuzzed through its UnmarshalText, and its bug needs a field of the
// struct, a field of a nested struct and the unmarshaled value all right.
package structs

import (
	"errors"
	"fmt"
)

// Level is read from its text: "low", "high" or "crit".
type Level int

func (l *Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	case "crit":
		*l = 3
	default:
		return errors.New("unknown level")
	}
	return nil
}

func (l Level) MarshalText() ([]byte, error) {
	switch l {
	case 1:
		return []byte("low"), nil
	case 2:
		return []byte("high"), nil
	case 3:
		return []byte("crit"), nil
	}
	return nil, fmt.Errorf("no level %d", int(l))
}

// Limits is nested in Config.
type Limits struct {
	Max    uint16
	Strict bool
}

// Config is fuzzed field by field.
type Config struct {
	Name   string
	Port   uint16
	Limits Limits
	Tags   []string
}

// Serve fails on a strict config on port 8443 at level crit.
func Serve(c Config, l Level) string {
	if c.Port == 8443 {
		if c.Limits.Strict {
			if l == 3 {
				panic(fmt.Sprintf("strict %s on 8443 at crit", c.Name)) // MARK:bug
			}
			return "strict"
		}
		return "tls"
	}
	return c.Name
}
