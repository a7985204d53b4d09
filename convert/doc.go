// Package convert is the side of refcore that faces the model: it reads a
// server's raw content blocks as testimony (what the server claims, which
// the host may doubt), checks them against the strict schema server authors
// must follow, and turns a tool result, push event, channel message or
// injection into the text and blocks a model may see.
//
// What it guarantees:
//
//   - [Classify] never panics and never fails: any JSON value (or none)
//     yields a [Block]. A bad optional field is set aside, never truncated
//     or coerced; a bad uri rejects the block whole; inline data next to a
//     disposition (also one inside its annotations or _meta) or a uri is
//     withheld. A property named twice is never read as the last one
//     silently: a never in any occurrence holds, a repeated optional
//     field is set aside, and a repeated uri or type rejects the block
//     whole. A reference whose annotations or _meta say never (where the
//     RFC's first revision put the disposition) is read as never, and so
//     is a block rejected whole whose top level, annotations or _meta say
//     it. Classifying touches no shared state.
//   - [Validate] is the strict schema check (MCPL Appendix B.1 as RFC-005
//     section 8 amends it, and no property named twice in any object),
//     for server authors. What the host shows never depends on it.
//   - A [Converter] reads a whole content's claims before it shows any
//     block (a never anywhere governs every block naming that uri, also a
//     never the server wrote as JSON into a text), registers every
//     reference through a [Registrar], and renders each view from the
//     records' current state. A model sees a reference as a stub: an
//     opaque id, its own block's cleaned name, type and claimed size,
//     where it came from, and what it offers next. Blocks naming one uri
//     share a record (its id, its never mark, its saved copy) while each
//     stub shows what its own block claimed. No view shows a uri under
//     never, nor any uri unless the host's [Policy] allows it; no view
//     shows inline data or an embedded resource a never withholds. Where
//     a text writes out a uri the content calls never or a server marked,
//     in its JSON or in prose, the view shows "[uri withheld]" instead.
//     In prose the replaced part runs to the next white space, double
//     quote, backtick or angle bracket, or to the next uri, so
//     punctuation glued to the uri ("(uri)." or "uri,next") goes with it:
//     a uri may hold those characters, and a cut before them could keep
//     part of it. A uri written into a name, media type
//     or type a server supplied is always shown that way, together with
//     the rest of that label. A server's mark counts for as long as the
//     [Registrar] remembers it (see [MarkReader]), also for content shown
//     before the mark was made. Every label a server supplied (a name, a
//     media type, a type, the names of its source) is cleaned and bounded
//     by package label first; the text of a text block is shown as sent,
//     but for the uris withheld in it and the view's bound. A stub has a
//     bounded size whatever its fields' lengths, and a whole
//     view stays within [Policy.ViewMax]: it shows the blocks in order while
//     they fit and ends with a notice that counts exactly the blocks it left
//     out. A host may not set a bound below [MinViewMax] or [MinStubMax],
//     so every view can show a whole stub and that count.
//   - Rendering costs what the content costs to read: each server-supplied
//     source name is cleaned once per content, and a view stops rendering
//     at its bound, however many blocks the content holds.
//   - The text of every stub and notice is a contract: the same facts give
//     the same words, release to release.
//
// What it does not reach: it fetches nothing and stores nothing, and it
// does not know whether a fetch would succeed unless the host wires
// [Policy.Refusal] to its fetcher. In a text it recognizes a uri by its
// scheme and "://" (also with its slashes escaped, as JSON may write
// them, in a string nested up to three deep), wherever it stands, a JSON
// "uri" member included: a never uri a text writes without its scheme
// stays as written. A uri written with the escapes JSON encoders write,
// or with the character references an HTML or XML writer puts for "&",
// quotes and angle brackets, is read as what they decode to; so is a uri
// percent-encoded up to three times over, as one url is written into
// another's query, which is recognized by its "://" encoded in whole or
// in part and ends at white space, a quote, an angle bracket, an "&" or a
// "#", or, once decoded, at what ends a uri written plainly or a "+". A
// uri that holds white space, a quote, an
// angle bracket, a backslash that looks like such an escape, or another
// URL, or that starts with more than a scheme before its "://" (as
// "jar:https://" does), or that has a scheme but no "://" (a urn: or
// mailto: uri), is recognized in a text only as
// written by a block of the same content, raw, JSON-escaped as the
// encoders of Go, Python, PHP and Gson escape, or percent-encoded whole as
// the URL encoders of Go, JavaScript, Python, PHP, Java and .NET write it
// (and encoded again, up to three times over), in any ASCII letter case
// (and in a label, where a uri with no "://" before it is withheld only
// when it is such a uri the views withhold);
// written out by a later content that has no block naming it, it shows
// in pieces (one without "://" whole), and a never or mark on it
// withholds only a piece that is a uri of its own. The texts are searched
// for up to 128 spellings of such uris, first those the content calls
// never or a server is known to have marked; past that, a text is
// withheld from the first place it may write out a never one left out
// (the percent-encoded forms take only the room the others leave, and at
// most 64 KiB between them, and a text is withheld from the first place it
// writes a uri so encoded when those of a never one, or of one with "://",
// were left out),
// and a uri without "://" that nobody calls never is not looked for, so
// a mark made on it later, or one only the durable mark store holds,
// does not reach the texts; nor does a later mark on such a uri reach
// the part of a text past the checked 4 MiB. A spelling that more
// than eight of a content's uris share (uris differing only in letter
// case) is withheld wherever a text writes it. Of a text too long, or of texts naming too many uris
// between them, to be checked whole, the part past the checked one is
// withheld when it names a uri. Where no white space follows a uri, its
// end is looked for at the first few marks after its "://", the first
// mark of each kind (the first comma of a CSV row), and the last few, so
// a never uri that ends at none of those (at the second comma of a row,
// when it holds a comma itself) may show. A mark only the host's durable
// mark store holds is asked about for the first 256 distinct uris the
// texts of a content name. A uri spelled with look-alike characters
// (full-width, a mark between its slashes) is not recognized in text or
// labels. A Converter is safe for concurrent use when its Registrar is.
package convert
