// Package uriform computes the key under which refcore files a reference's
// uri, so that every spelling a server could send for one resource shares
// one record and one never mark. A key that told two spellings of the same
// request apart would let a server's never be walked around by respelling
// the uri; a key that merges two resources only makes a never withhold
// both. Where the two risks meet, the key merges.
//
// Canonical is deterministic, never panics, and is idempotent. An http,
// https, ws, wss or ftp URL is rebuilt from its parts in one fixed
// spelling (see [Canonical]
// for the list); the rebuilt form is only used when it rebuilds to itself,
// and otherwise the trimmed text is the key, so the key of a key is always
// the key itself.
//
// Choices the key makes, and why:
//
//   - The fragment is dropped: a client never sends it.
//   - An empty query ("?" alone) is dropped, and so are white space and
//     invisible characters at the end of the path or the query, raw or
//     escaped. The text is trimmed of them anyway, and a client sends the
//     tail of "https://h/p #x" as "/p%20", so both must share the key of
//     "https://h/p".
//   - Empty path segments collapse, as dot segments resolve. This can
//     merge two resources a server tells apart ("/a//b" and "/a/b"); a
//     never on one then withholds the other too.
//   - In the path, escapes are decoded before the segments are read, so
//     an escaped "/" separates segments and an escaped "!" is "!". Go's
//     client sends a path as written only when every character may stand
//     there raw, and otherwise re-escapes the decoded path whole: the same
//     uri with a trailing space goes out with "%2F" turned into "/". In the
//     query, which is sent as written, only escapes of unreserved
//     characters are decoded.
//   - A trailing slash is kept: "/a/" and "/a" are different requests, and
//     servers commonly answer them differently.
//   - A trailing dot of a host name is dropped. "h." and "h" can resolve to
//     different hosts when a resolver applies search domains; merging them
//     fails closed.
//   - A Unicode host name is keyed by the ASCII (punycode) name Go's HTTP
//     Transport dials for it, asked of a Transport that never connects, so
//     two spellings share a key exactly when the client dials them alike;
//     a name the client's lookup refuses is kept percent-encoded, with
//     only its ASCII letters lower-cased, as the client then dials it.
//   - A Unicode host name whose length alone shows that no client can
//     dial it is not looked up: its ASCII form would have a label over 63
//     bytes, or be over 253 bytes in all, which Go's resolver refuses.
//     Every such name gets the same host in the key, a fixed name with a
//     label over 63 bytes under ".invalid", so no name that can be dialed
//     shares it. The lookup would encode the whole name, at a cost of its
//     length times its number of distinct characters, and a server could
//     send thousands of such uris. Merging them fails closed: a never on
//     one withholds a uri with any other such host and the same rest, and
//     none of them can be fetched anyway. The length is a lower bound
//     counted before the mapping, leaving out the characters the mapping
//     drops and allowing for the ones it composes into one, so a short
//     name spelled long keeps the short name's key. A name the count does
//     not rule out is looked up as above, even when its ASCII form then
//     proves too long.
//   - An IPv6 address is written in its shortest form; a zone is kept in
//     its case (interface names are case-sensitive).
//   - User information is dropped. It is no part of the request line, and
//     a never on "https://h/secret" must also withhold (and hide the
//     address of) "https://alice@h/secret"; the fetcher refuses a uri that
//     carries one anyway.
//   - Invisible characters inside the uri are kept: a client sends them,
//     escaped, so they name another request.
//   - Any other uri (another scheme, a URL without a host, text that does
//     not parse) is keyed by its trimmed text with the scheme lower-cased.
//
// The package does not resolve names, follow redirects or decide whether a
// uri is safe to fetch: that is package fetch's job. It is internal: hosts
// never see keys.
package uriform
