// Package badshapes has fuzz targets whose shapes go test cannot fuzz.
package badshapes
