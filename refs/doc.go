// Package refs keeps the host's private records of references: a bounded,
// least-recently-used registry that hands out opaque reference ids, keeps
// one record per uri with the raw uri (which may itself be a credential),
// remembers when a server marked a uri never, and, after a fetch, what the
// verified copy is and where it was saved.
//
// What it guarantees:
//
//   - Ids are "ref_" plus 13 lowercase letters and digits derived from
//     crypto/rand, never reused by a Registry, even after eviction; nothing
//     a server sends goes into one.
//   - One record per uri, whatever spelling of it a server sends: the
//     registry keys records by a canonical form of the uri.
//   - A bound on records (2,000 by default); eviction takes the least
//     recently registered or looked-up record. Apart from the calls to a
//     host's mark store, every operation takes constant time.
//   - Looking up an evicted or never-issued id fails with
//     [ErrUnknownReference] and never resolves to another record.
//   - A server's never marks a uri for good: nothing clears the mark while
//     the record lives, the registry remembers it after the record is
//     evicted, and a [MarkStore] can keep it across restarts. The marks
//     kept in memory are bounded per server (so memory grows with the
//     number of servers times that bound), and one server's flood of
//     marks cannot push out another server's. When a store fails, the
//     mark holds anyway. A store that can record many marks at once (a
//     [FileMarks] writes them with one sync) gets a content's never marks
//     together, so a content naming thousands of never uris waits for
//     one write, not one per uri.
//   - A Registry is safe for concurrent use by multiple goroutines. It
//     calls the host's mark store, remover and eviction callback with no
//     lock of its own held, so they may block or call back into the
//     registry. A removal of a saved copy waits until a fetch storing a
//     copy of the same record has finished (without making its caller
//     wait), so a remover or mark store must not wait for a fetch of the
//     same reference.
//
// What it does not reach: it never dials, reads or writes payloads
// (package fetch does), and it shows nothing to a model (package convert
// does). The records it returns are snapshots; holding one does not keep a
// record alive.
package refs
