//go:build ignore

package app

this file is excluded by its build tag and does not compile
