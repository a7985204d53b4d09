module github.com/mcplrefs/refcore

go 1.25.0

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/text v0.30.0
)
