//go:build ignore

// This file is excluded by its build tag; it would not compile if it were built.
package app

var _ = thisIdentifierIsUndefined
