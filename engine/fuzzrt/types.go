package fuzzrt

import "reflect"

// TypeName spells a fuzz argument type as it appears in corpus files: "[]byte",
// "string", "int64"… (byte and rune are spelled uint8 and int32, as reflect does).
func TypeName(t reflect.Type) string { return t.String() }

// ZeroValue returns the zero value of the argument type named name, or nil if
// the type is not supported.
func ZeroValue(name string) any {
	switch name {
	case "[]uint8", "[]byte":
		return []byte{}
	case "string":
		return ""
	case "bool":
		return false
	case "int":
		return int(0)
	case "int8":
		return int8(0)
	case "int16":
		return int16(0)
	case "int32", "rune":
		return int32(0)
	case "int64":
		return int64(0)
	case "uint":
		return uint(0)
	case "uint8", "byte":
		return uint8(0)
	case "uint16":
		return uint16(0)
	case "uint32":
		return uint32(0)
	case "uint64":
		return uint64(0)
	case "float32":
		return float32(0)
	case "float64":
		return float64(0)
	}
	return nil
}
