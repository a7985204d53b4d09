package fetch

import "testing"

// TestCutFold pins how a log detail loses a secret (F3, F14): in either
// letter case, every occurrence, and without disturbing the bytes around
// it, invalid UTF-8 that a server sent included.
func TestCutFold(t *testing.T) {
	for _, tc := range []struct{ s, secret, want string }{
		{"code \"Cap-42\" and cap-42", "cap-42", "code \"…\" and …"},
		{"\xff\xfeCAP%2d42\xff tail", "cap%2D42", "\xff\xfe…\xff tail"},
		{"\xe2\x80 no secret here", "cap-42", "\xe2\x80 no secret here"},
		{"", "cap-42", ""},
		{"anything", "", "anything"},
	} {
		if got := cutFold(tc.s, tc.secret); got != tc.want {
			t.Errorf("cutFold(%q, %q) = %q, want %q", tc.s, tc.secret, got, tc.want)
		}
	}
}

// TestSecretLike pins which pieces of an address a log detail loses.
func TestSecretLike(t *testing.T) {
	for p, want := range map[string]bool{
		"unexpected": false, "refused": false, "Refused": false, "EOF": false, "files": false, "a1": false,
		"capability-77": true, "/files/x": true, "abcdefghijkl": true, "x%2D42": true,
		// Letters whose case changes inside the word, as random tokens'
		// do, are no word a cause says.
		"QwErTyUiOp": true, "hgTqWkPzRx": true,
	} {
		if got := secretLike(p); got != want {
			t.Errorf("secretLike(%q) = %v, want %v", p, got, want)
		}
	}
}
