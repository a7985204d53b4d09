package nilness

import (
	"io"
	"os"
	"testing"
)

func TestIs(t *testing.T) {
	var nilFile *os.File
	var nilFunc func()
	var nilReader io.Reader = nilFile
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"untyped nil", nil, true},
		{"nil pointer", nilFile, true},
		{"nil pointer in an interface", nilReader, true},
		{"nil func", nilFunc, true},
		{"nil map", map[string]int(nil), true},
		{"nil slice", []byte(nil), true},
		{"pointer", os.Stdout, false},
		{"func", func() {}, false},
		{"empty slice", []byte{}, false},
		{"struct", struct{}{}, false},
		{"zero int", 0, false},
	} {
		if got := Is(tc.v); got != tc.want {
			t.Errorf("%s: Is = %t, want %t", tc.name, got, tc.want)
		}
	}
}
