package uriform

import "testing"

// TestRespellingsShareOneKey lists spellings a server could send for one
// resource. Every spelling in a group must get the group's key, or a never
// mark on one spelling could be walked around with another.
func TestRespellingsShareOneKey(t *testing.T) {
	groups := []struct {
		name, key, reason string
		spellings         []string
	}{
		{
			name:   "fragment",
			key:    "https://h.example/secret",
			reason: "a fragment never reaches the server",
			spellings: []string{
				"https://h.example/secret#x",
				"https://h.example/secret#",
				"https://h.example/secret#%7e",
			},
		},
		{
			name:   "websocket",
			key:    "wss://stream.example/live?token=t",
			reason: "WebSocket uris are http's in their syntax and default ports (RFC 6455 §3)",
			spellings: []string{
				"WSS://STREAM.example/live?token=t",
				"wss://stream.example:443/live?token=t",
				"wss://u:pw@stream.example/live?token=t",
				"wss://stream.example./live?token=t#x",
			},
		},
		{
			name:      "websocket-plain",
			key:       "ws://stream.example/live",
			reason:    "ws shares http's default port",
			spellings: []string{"WS://Stream.Example:80/live", "ws://stream.example:080/live", "ws://stream.example/./live"},
		},
		{
			name:   "ftp",
			key:    "ftp://files.example/a.wav",
			reason: "an ftp uri names a host and path as http does; its default port is 21, and user information is dropped as for http",
			spellings: []string{
				"FTP://FILES.example/a.wav",
				"ftp://files.example:21/a.wav",
				"ftp://user:pw@files.example/a.wav",
				"ftp://files.example/%61.wav",
			},
		},
		{
			name:   "ipv4-numbers",
			key:    "http://10.0.0.1/take.wav",
			reason: "a host that ends in a number is an IPv4 address in any of the forms WHATWG URL parsers (browsers) and inet_aton read: one to four parts, each decimal, octal or hexadecimal",
			spellings: []string{
				"http://167772161/take.wav",
				"http://0xa.0.0.1/take.wav",
				"http://0XA.0.0.1/take.wav",
				"http://10.1/take.wav",
				"http://10.0.1/take.wav",
				"http://012.0.0.01/take.wav",
				"http://0x0a000001/take.wav",
				"http://10.0.0.1./take.wav",
				"http://0x00000000000000a.0.0.1/take.wav",
				"http://0000000000000000012.0.0.1/take.wav",
			},
		},
		{
			name:   "userinfo",
			key:    "https://h.example/secret",
			reason: "a user name or password is not part of the request line; the fetcher refuses such a uri, and a never on the resource must cover it",
			spellings: []string{
				"https://u@h.example/secret",
				"https://u:pw@h.example/secret",
				"https://%75:@h.example/secret",
			},
		},
		{
			name:      "empty-query",
			key:       "https://h.example/secret",
			reason:    "an empty query asks for the same resource",
			spellings: []string{"https://h.example/secret?", "https://h.example/secret?#x", "https://h.example/secret? "},
		},
		{
			name:   "port",
			key:    "https://h.example/secret",
			reason: "an empty port, the default port and its zero-padded spelling dial the same port",
			spellings: []string{
				"https://h.example:/secret",
				"https://h.example:443/secret",
				"https://h.example:0443/secret",
			},
		},
		{
			name:      "port-http",
			key:       "http://h.example/p",
			reason:    "the default port of http is 80",
			spellings: []string{"http://h.example:80/p", "HTTP://H.example:/p", "http://h.example:080/p"},
		},
		{
			name:   "case",
			key:    "https://h.example/secret",
			reason: "scheme and host are case-insensitive",
			spellings: []string{
				"HTTPS://H.EXAMPLE/secret",
				"hTTpS://h.Example/secret",
			},
		},
		{
			name:   "dot-segments",
			key:    "https://h.example/secret",
			reason: "dot segments are resolved before the path is compared",
			spellings: []string{
				"https://h.example/x/../secret",
				"https://h.example/./secret",
				"https://h.example/a/b/../../secret",
				"https://h.example/../secret",
				"https://h.example/%2e/secret",
				"https://h.example/x/%2E%2e/secret",
				"https://h.example/x/.././secret",
				"https://h.example/secret/x/../../secret",
			},
		},
		{
			name:   "empty-segments",
			key:    "https://h.example/secret",
			reason: "empty path segments collapse",
			spellings: []string{
				"https://h.example//secret",
				"https://h.example///secret",
				"https://h.example/.//secret",
			},
		},
		{
			name:   "surroundings",
			key:    "https://h.example/secret",
			reason: "surrounding white space and invisible characters are not part of the uri",
			spellings: []string{
				" https://h.example/secret ",
				"\u200bhttps://h.example/secret\ufeff",
				"\t\nhttps://h.example/secret\r\n",
				"\u2066https://h.example/secret\u2069\u00a0",
			},
		},
		{
			name:      "unreserved-escapes",
			key:       "https://h.example/secret",
			reason:    "an escaped unreserved character is the character",
			spellings: []string{"https://h.example/%73ecret", "https://h.example/secr%65t", "https://h.example/%73%65%63%72%65%74"},
		},
		{
			name:      "host-trailing-dot",
			key:       "https://h.example/secret",
			reason:    "a fully qualified host name names the same host",
			spellings: []string{"https://h.example./secret", "https://H.EXAMPLE.:443/secret"},
		},
		{
			name:   "reserved-escapes",
			key:    "https://h.example/~u/a%3Fb?x=%3D",
			reason: "escapes of characters that cannot stand raw keep, with upper-case hex",
			spellings: []string{
				"https://h.example/%7Eu/a%3fb?x=%3d",
				"https://h.example/%7eu/a%3Fb?x=%3D#f",
			},
		},
		{
			name:   "path-escapes-decoded",
			key:    "https://h.example/a/b!c",
			reason: "Go's client re-escapes a path it cannot send as written, so an escaped slash or sub-delimiter in a path is read as the character",
			spellings: []string{
				"https://h.example/a%2Fb%21c",
				"https://h.example/a%2fb!c",
				"https://h.example/a%2Fb!c%20", // sent as /a/b%21c%20
				"https://h.example/a/b%21c #x", // sent the same way
			},
		},
		{
			name:   "query",
			key:    "https://files.example/take.wav?token=secret",
			reason: "the query keeps its value through every other respelling",
			spellings: []string{
				"https://files.example/take.wav?token=secret#t=1",
				"HTTPS://files.example:443/./take.wav?token=%73ecret",
				"https://files.example//take.wav?token=secre%74",
			},
		},
		{
			name:      "root",
			key:       "https://h.example/",
			reason:    "an empty path is requested as /",
			spellings: []string{"https://h.example", "https://h.example/?", "https://h.example/.", "https://h.example#x", "https://h.example/..//"},
		},
		{
			name:   "non-ascii-path",
			key:    "https://h.example/caf%C3%A9",
			reason: "a raw non-ASCII character is sent percent-encoded",
			spellings: []string{
				"https://h.example/café",
				"https://h.example/caf%c3%a9",
			},
		},
		{
			name:   "idna-host",
			key:    "https://xn--bcher-kva.example/p",
			reason: "a Unicode host name and its ASCII (punycode) form name one host",
			spellings: []string{
				"https://bücher.example/p",
				"https://BÜCHER.example/p",
				"https://b%C3%BCcher.example/p",
				"https://XN--BCHER-KVA.example/p",
			},
		},
		{
			name:      "ipv6",
			key:       "https://[::1]/p",
			reason:    "one IPv6 address, written longer or with the default port",
			spellings: []string{"https://[0:0::1]:443/p", "https://[0000::0001]/p"},
		},
		{
			name:   "blank-tail",
			key:    "https://h/p",
			reason: "white space at the end of the path or query, raw or escaped, is trimmed as if it ended the uri",
			spellings: []string{
				"https://h/p? #", // the example of a key that was not idempotent
				"https://h/p? ",
				"https://h/p?%20#x",
				"https://h/p #x",
				"https://h/p%20%E2%80%8B",
				"https://h/p\u00a0#x",
			},
		},
		{
			name:      "blank-tail-query",
			key:       "https://h/p?a=1",
			reason:    "the same holds at the end of a query",
			spellings: []string{"https://h/p?a=1 #x", "https://h/p?a=1%20%09", "https://h/p?a=1\u2028#"},
		},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			if got := Canonical(g.key); got != g.key {
				t.Errorf("Canonical(%+q) = %+q; the group's key must be canonical", g.key, got)
			}
			for _, s := range g.spellings {
				if got := Canonical(s); got != g.key {
					t.Errorf("Canonical(%+q) = %+q, want %+q (%s)", s, got, g.key, g.reason)
				}
				if c := Canonical(s); Canonical(c) != c {
					t.Errorf("Canonical is not idempotent on %+q: %+q then %+q", s, c, Canonical(c))
				}
			}
		})
	}
}

// TestDistinctResourcesKeepDistinctKeys lists pairs that name different
// requests: they must not share a key.
func TestDistinctResourcesKeepDistinctKeys(t *testing.T) {
	pairs := []struct{ a, b, reason string }{
		{"https://h.example/secret", "https://h.example/secret2", "different paths"},
		{"https://h.example/secret", "https://h.example/Secret", "paths are case-sensitive"},
		{"https://h.example/secret", "https://h.example/secret/", "a trailing slash is another path"},
		{"https://h.example/secret", "https://h.example/secret/.", "a final dot segment leaves a trailing slash (RFC 3986 §5.2.4)"},
		{"https://h.example/secret", "https://h.example/secret/x/..", "so does a final dot-dot segment"},
		{"https://h.example/p?a=1", "https://h.example/p?a=2", "different query values"},
		{"https://h.example/p?a=1&b=2", "https://h.example/p?b=2&a=1", "query order is the server's business"},
		{"https://h.example/p", "https://h.example/p?a", "a non-empty query is another request"},
		{"http://h.example/p", "https://h.example/p", "http and https are different origins"},
		{"http://10.0.0.1/p", "http://10.0.0.2/p", "different addresses"},
		{"http://10.0.0.1/p", "http://10.0.0.1.example/p", "a name that does not end in a number is no address"},
		{"http://256.0.0.1/p", "http://0.0.0.0/p", "a part past 255 makes no address; the text stays"},
		{"ws://h.example/p", "http://h.example/p", "a WebSocket uri is not an http one"},
		{"wss://h.example/p", "ws://h.example/p", "wss and ws are different origins"},
		{"ftp://h.example/p", "ftp://h.example:2121/p", "a non-default ftp port is another server"},
		{"ftp://h.example/p", "sftp://h.example/p", "another scheme"},
		{"https://h.example/p", "https://h.example:8443/p", "a non-default port is another origin"},
		{"http://h.example:443/p", "https://h.example/p", "the default port belongs to the scheme"},
		{"https://h.example/p", "https://other.example/p", "different hosts"},
		{"https://h.example/a%3Fb", "https://h.example/a?b", "an escaped question mark stays in the path"},
		{"https://h.example/p?a%26b", "https://h.example/p?a&b", "an escaped sub-delimiter in a query is not the delimiter"},
		{"https://h.example/p?a+b", "https://h.example/p?a%20b", "plus in a query is left to the server"},
		{"https://h.example/se\u200bcret", "https://h.example/secret", "an invisible character inside the path is sent, encoded"},
		{"https://h.example/a%20/b", "https://h.example/a/b", "white space inside the path is kept"},
		{"https://h.example/p?a=%20&b", "https://h.example/p?a=&b", "white space inside the query is kept"},
	}
	for _, p := range pairs {
		if ka, kb := Canonical(p.a), Canonical(p.b); ka == kb {
			t.Errorf("Canonical(%+q) = Canonical(%+q) = %+q; want distinct keys (%s)", p.a, p.b, ka, p.reason)
		}
	}
}
