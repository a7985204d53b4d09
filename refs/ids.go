package refs

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"io"
	"sync/atomic"
)

// idMint hands out reference ids. Each id is a 64-bit counter passed
// through a four-round Feistel network keyed from the registry's random
// source: a permutation, so no two counter values give one id, and no
// registry needs to remember the ids it issued to keep them unique.
// The key comes from crypto/rand by default; nothing a server sends feeds
// it. Ids are opaque, not secret: a guessed id still resolves only inside
// the host.
//
// mint is safe for concurrent use, so the registry mints outside its lock
// (BenchmarkHostFlow/fetchers=8: four SHA-256 blocks per id were the
// longest step under the lock).
type idMint struct {
	key  [32]byte
	next atomic.Uint64
}

func newIDMint(r io.Reader) (*idMint, error) {
	m := &idMint{}
	if _, err := io.ReadFull(r, m.key[:]); err != nil {
		return nil, err
	}
	return m, nil
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// mint returns "ref_" and 13 lowercase base32 characters.
func (m *idMint) mint() string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], m.permute(m.next.Add(1)))
	// Encoded in place: one allocation per id, not two
	// (BenchmarkRegister/miss).
	var id [len("ref_") + 13]byte
	copy(id[:], "ref_")
	idEncoding.Encode(id[len("ref_"):], b[:])
	return string(id[:])
}

func (m *idMint) permute(x uint64) uint64 {
	l, r := uint32(x>>32), uint32(x)
	var buf [32 + 1 + 4]byte
	copy(buf[:], m.key[:])
	for round := byte(0); round < 4; round++ {
		buf[32] = round
		binary.BigEndian.PutUint32(buf[33:], r)
		sum := sha256.Sum256(buf[:])
		l, r = r, l^binary.BigEndian.Uint32(sum[:4])
	}
	return uint64(l)<<32 | uint64(r)
}
