module github.com/mcplrefs/refcore

go 1.24.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	golang.org/x/text v0.30.0 // indirect
)
