// Package refs keeps the host-private reference records of RFC-005 (§6.2):
// a bounded, least-recently-used registry that hands out opaque reference
// ids, keeps one record per uri, holds the raw uri and the never mark, and
// after a fetch the verified facts and saved path.
//
// What it guarantees:
//
//   - Ids are "ref_" plus lowercase random text from crypto/rand, unique
//     and never reused by a Registry, even after eviction; nothing a server
//     sends goes into one (R1).
//   - One record per uri, keyed by the uri's canonical form (R2, N8).
//   - A bound on records (default 2,000); eviction takes the least
//     recently registered or looked-up record; every operation is O(1) (R3).
//   - A lookup of an evicted or never-issued id fails with
//     [ErrUnknownReference] and never resolves to another record (R4).
//   - A server's never marks a record for good: nothing clears the mark
//     while the record lives, and a mark is remembered by uri across
//     eviction through the [MarkStore] (N1, N7).
//   - A Registry is safe for concurrent use by multiple goroutines; the
//     eviction callback runs after the registry's lock is released, so it
//     may call back into the registry (R7, R8).
//
// What it does not reach: it never dials, reads or writes payloads (package
// fetch does), and it shows nothing to a model (package convert does). The
// records it returns are snapshots; holding one does not keep a record
// alive.
package refs
