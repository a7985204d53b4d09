// Package copylock orders, per reference record, the two kinds of work
// that touch a record's saved copy in storage: a fetch that puts a copy
// there and names it on the record, and the removal of a copy the record
// no longer names. A store names a record's copies after the record, so a
// removal that checked the name before a fetch stored a new copy under
// that same name would otherwise delete the new copy, and two fetches
// committing at once could replace each other's files.
//
// A fetch takes the record's lock with [Hold] and may wait for it. A
// removal runs through [Do], which never waits: while the lock is held,
// the removal is put off, and runs once the holder lets go (after a fetch
// has named its copy, so the removal's check sees that copy), on a
// goroutine of its own that keeps the lock until the work put off is
// done. Neither the holder nor the caller of Do waits for work put off.
//
// Locks are kept per owner (a registry) and record id, and only while
// they are held or awaited. The package orders nothing else: a host that
// writes copies itself, outside the fetcher, is not ordered with them.
package copylock
