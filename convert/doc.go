// Package convert is the wire side of RFC-005 in a host: it reads raw
// content blocks as testimony, checks them against the strict emitter
// schema, and turns a tool result, push event, channel message or
// injection into what a model may see.
//
// What it guarantees:
//
//   - [Classify] never panics and never fails: any JSON value (or none)
//     yields a [Block]. A bad optional field is rejected as a field and is
//     absent, never truncated or coerced; a bad uri rejects the block whole;
//     inline data beside a disposition or uri is withheld (P1–P6, P8).
//     Classifying is pure (P9).
//   - [Validate] is the strict JSON-Schema-equivalent check of Appendix B.1
//     as RFC-005 §8 amends it, for server authors (P7). Host treatment never
//     depends on it.
//   - A [Converter] reads a whole content's claims before showing any block
//     (N2), registers every reference through a [Registrar], and renders
//     every view from the records' current state. No view carries a uri
//     under never, nor by default any uri; no view carries withheld inline
//     data or an embedded resource a never names (S2, P5, N6). Every
//     server-supplied string passes through package label before it reaches
//     a view; a stub has a bounded size whatever its fields' lengths, and a
//     whole view stays within [Policy.ViewMax] (vectors 8, 17).
//   - The text of every stub and notice is a contract, pinned by golden
//     files under testdata/convert.
//
// What it does not reach: it fetches nothing (F1) and stores nothing; it
// does not decide whether a fetch would succeed unless the host supplies
// [Policy.Refusal]. A Converter is safe for concurrent use when its
// Registrar is.
package convert
