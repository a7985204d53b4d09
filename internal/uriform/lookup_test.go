package uriform

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// lookupHost returns the host name net/http dials for a request to
// http://host/, ASCII letters lower-cased (DNS ignores their case), or ""
// when the client refuses the name.
func lookupHost(t *testing.T, host string) string {
	t.Helper()
	var addr string
	tr := &http.Transport{DialContext: func(_ context.Context, _, a string) (net.Conn, error) {
		addr = a
		return nil, errors.New("not dialing")
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest("GET", "http://"+host+"/", nil)
	if err != nil {
		return ""
	}
	tr.RoundTrip(req)
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return LowerASCII(h)
}

// keyHost returns the host of the key of http://host/.
func keyHost(host string) string {
	u, err := url.Parse(Canonical("http://" + host + "/"))
	if err != nil {
		return "unparsed:" + host
	}
	return u.Host
}

// TestHostKeysFollowHTTPLookup pins the key's host against the name an
// HTTP client actually looks up (net/http's IDNA lookup, which is not
// transitional: ß and final sigma stay). Two spellings the client looks
// up as one host share a key (N8: a never on one withholds the other),
// and two spellings it looks up as different hosts never do (R2, F2: one
// server's reference cannot be another's record). Names the client
// refuses are left out of the second rule, since a record for one cannot
// be fetched at all, and so are names its IDNA lookup refuses and it then
// looks up as written, in UTF-8 (a joiner or a direction mark in a
// label): no registry hands out such a name, so only the owner of the
// zone above can make it resolve, and the key may merge it with the name
// without the mark.
func TestHostKeysFollowHTTPLookup(t *testing.T) {
	hosts := []string{
		"fa\u00df.test", "fass.test", "FASS.test", "xn--fa-hia.test", "FA\u1e9e.test",
		"\u03c3\u03bf\u03c6\u03bf\u03c2.test", "\u03c3\u03bf\u03c6\u03bf\u03c3.test", "\u03a3\u039f\u03a6\u039f\u03a3.test",
		"\u0130nternal.test", "internal.test", "xn--internal-o0e.test", "i\u0307nternal.test", "INTERNAL.test",
		"\u212aelvin.test", "kelvin.test", "\uff49nternal.test",
		"b\u00fccher.test", "B\u00dcCHER.test", "xn--bcher-kva.test", "b\u00fc\u200bcher.test", "bu\u0308cher.test",
		"\u4f8b\u3048.\u30c6\u30b9\u30c8", "xn--r8jz45g.xn--zckzah", "\u4f8b\u3048\u3002\u30c6\u30b9\u30c8",
		"\u0130_x.\u00fc", "\u0130_X.\u00fc", "i\u0307_x.\u00fc", "%FF.test", "%ff.TEST",
		"a\u200db.test", "a\u200cb.test", "ab.test", "xn--ab-m1t.test", "\u0627\u200c\u0628.test", "\u0627\u0628.test",
		// A later outside review: a non-joiner before a letter that does
		// not join, ignorable characters and reordered marks beside a
		// joiner, an iota subscript before a mark, a supplementary letter
		// with a mark, a label of over a kilobyte.
		"\u0628\u200c1.test", "\u06281.test", "\u1820\u200ca.test", "\u1820a.test",
		"\u0915\u094d\u00ad\u200d\u0937.test", "\u0915\u094d\u093c\u200d\u0937.test", "\u0915\u093c\u094d\u0937.test",
		"\u0628\u00ad\u200c\u0628.test", "\u0628\u0628.test", "\u1f80\u0301.test", "\u1f84.test", "\u03b1\u0345\u0301.test",
		"\U00010041\u0308.test", "\u00e4.test", "\U00010391\u0345.test", "\u1fb3.test",
		strings.Repeat("\u00fc", 520) + ".test", strings.Repeat("\u00dc", 520) + ".test",
	}
	look := map[string]string{}
	key := map[string]string{}
	for _, h := range hosts {
		look[h], key[h] = lookupHost(t, h), keyHost(h)
		if again := keyHost(key[h]); again != key[h] {
			t.Errorf("the key of %+q is not stable: %q, then %q", h, key[h], again)
		}
	}
	for i, a := range hosts {
		for _, b := range hosts[i+1:] {
			sameLook := look[a] != "" && look[a] == look[b]
			sameKey := key[a] == key[b]
			switch {
			case sameLook && !sameKey:
				t.Errorf("N8: %+q and %+q are both looked up as %q, but key as %q and %q", a, b, look[a], key[a], key[b])
			case sameKey && registrable(look[a]) && registrable(look[b]) && look[a] != look[b]:
				t.Errorf("R2/F2: %+q and %+q share the key %q, but are looked up as %q and %q", a, b, key[a], look[a], look[b])
			}
		}
	}
}

// registrable reports whether a looked-up name is one a registry could
// have handed out: not refused, and ASCII.
func registrable(look string) bool {
	for i := 0; i < len(look); i++ {
		if look[i] >= 0x80 {
			return false
		}
	}
	return look != ""
}

// TestHostKeysFollowHTTPLookupEverywhere is TestHostKeysFollowHTTPLookup
// for every code point of the first two planes, in host shapes that put
// it alone, between letters, after a virama and between joining letters:
// wherever the client looks the host up by an ASCII name, the host's key
// is that name's key. An outside review found compatibility sigmas,
// Cherokee letters and the joiners keyed apart from the name dialed.
func TestHostKeysFollowHTTPLookupEverywhere(t *testing.T) {
	shapes := []string{"%c.test", "a%cb.test", "\u0915\u094d%c\u0937.test", "\u0628%c\u0628.test"}
	// Shapes a later review added, swept over the first plane only.
	bmpShapes := []string{"\u0628\u200c%c.test", "\u1820\u200c%c.test", "%c\u0301.test", "%c\u0345.test", "\u0915\u094d%c\u200d\u0937.test"}
	bad := 0
	for r := rune(0x80); r < 0x20000; r++ {
		if r >= 0xd800 && r < 0xe000 {
			continue
		}
		all := shapes
		if r < 0x10000 {
			all = append(shapes[:len(shapes):len(shapes)], bmpShapes...)
		}
		for _, shape := range all {
			h := fmt.Sprintf(shape, r)
			look := lookupHost(t, h)
			if !registrable(look) {
				continue
			}
			if k, want := keyHost(h), keyHost(look); k != want {
				if bad++; bad <= 20 {
					t.Errorf("%+q: the client looks it up as %q, whose key is %q, but its key is %q", h, look, want, k)
				}
			}
		}
	}
	if bad > 20 {
		t.Errorf("%d hosts in all", bad)
	}
}

// TestColonHostKeptWhole pins R2 for a host name that holds a colon: the
// URL parser takes the last colon for the port, and a lookup that split
// the name again keyed http://é.test:1:80/x like http://é.test/x, which
// the client dials elsewhere.
func TestColonHostKeptWhole(t *testing.T) {
	for _, uri := range []string{"http://\u00e9.test:1:80/x", "http://\u00e9.test::81/x"} {
		if k, plain := Canonical(uri), Canonical("http://\u00e9.test/x"); k == plain {
			t.Errorf("R2: %+q shares the key %q with http://é.test/x", uri, k)
		}
		if k := Canonical(uri); Canonical(k) != k {
			t.Errorf("the key of %+q is not stable: %q", uri, k)
		}
	}
}
