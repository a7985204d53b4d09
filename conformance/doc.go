// Package conformance runs RFC-005's executable vectors against refcore
// and implements the observer contract (shared design:
// conformance-observer.md) through which any outside checker can judge the
// library.
//
// What it guarantees: an observation is produced by the library's real
// functions, the same ones a host calls (convert's views, refs' registry,
// fetch's fetcher), in the conformance profile: a fetcher that fetches
// never references when asked (fetch.Config.FetchNever, which the vectors
// expect), a registry bound of 2,000, an in-memory store that records
// each save, and a view bound of [MaxViewChars]. Each case gets its own
// loopback fixture servers; nothing leaves the machine.
//
// What it does not reach: it is evidence at the library's boundary, not a
// running host or a model-provider integration; it judges only what the
// vectors and the contract assert.
package conformance
