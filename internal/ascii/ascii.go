package ascii

// Lower returns s with the ASCII letters A–Z lower-cased and every other
// byte unchanged. It allocates only if s holds an upper-case ASCII letter.
func Lower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}
