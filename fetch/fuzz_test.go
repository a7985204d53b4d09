package fetch

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// FuzzGzipCeiling checks the decoded-byte ceiling whatever gzip input
// arrives: a success never holds more than max bytes, and a stopped
// download never read more than one byte past it (F5–F7).
func FuzzGzipCeiling(f *testing.F) {
	f.Add(gzipped(f, bytes.Repeat([]byte("a"), 10000)), int64(100))
	f.Add(gzipped(f, make([]byte, 1<<20)), int64(4096))
	f.Add(append(gzipped(f, []byte("RIFF0000WAVE")), gzipped(f, make([]byte, 5000))...), int64(12))
	f.Add(gzipped(f, nil), int64(1))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"), int64(10))
	f.Fuzz(func(t *testing.T, enc []byte, max int64) {
		if max <= 0 || max > 1<<20 {
			max = 1 + max&0xffff
			if max <= 0 {
				max = 1
			}
		}
		e := newEnv(t, gzipBody(enc))
		rec := e.ref(serverName, blk(""))
		res, err := e.fetch(context.Background(), rec, Request{MaxBytes: max})
		if err == nil {
			if res.Bytes > max {
				t.Fatalf("kept %d bytes under a max of %d", res.Bytes, max)
			}
			for _, s := range e.mem.Saves() {
				if int64(len(s.Bytes)) > max {
					t.Fatalf("stored %d bytes under a max of %d", len(s.Bytes), max)
				}
			}
			return
		}
		var fail *Failure
		if !errors.As(err, &fail) {
			t.Fatalf("error %T is not a *Failure", err)
		}
		if fail.Code == CodeTooLarge && fail.Got > max+1 {
			t.Fatalf("read %d bytes past a max of %d before stopping", fail.Got, max)
		}
		if len(e.mem.Saves()) != 0 {
			t.Fatal("a failed fetch kept a copy")
		}
	})
}
