// Package label turns strings that a server supplied (a reference's name, a
// media type, provenance text, a response's Content-Type, a saved path) into
// short display labels that are safe to place in model-visible text.
//
// Every such string passes through [Clean] before it is shown or stored, and
// through [Bound] (or both at once, through [Display]) before it is placed in
// a stub. Media types go through [MediaType], and comparisons between media
// types use [MediaTypeEssence].
//
// # Guarantees
//
// The result of [Clean] is valid UTF-8: each run of invalid bytes becomes one
// U+FFFD. It contains no rune for which [Removed] reports true, so nothing in
// it can hide, reorder or break text unseen: no control character (C0, DEL
// and C1), no format character (among them every character that changes the
// direction of text, the zero-width characters, the byte order mark and the
// tag characters), no default-ignorable character (those a renderer draws as
// nothing, such as variation selectors and Hangul fillers), and no line or
// paragraph separator. The set follows the Unicode tables of the Go release
// the program is built with. Right-to-left text such as Arabic and Hebrew is
// kept, and so is inner whitespace, except where the whitespace is itself in
// the removed set (tab, newline and the other controls, U+2028, U+2029).
// Leading and trailing whitespace is trimmed. An empty result means the
// label is absent, and callers leave its segment out.
//
// The result of [Bound] and [Display] holds at most the requested number of
// runes, the truncation marker "…" (U+2026) included. Truncation never splits
// a rune and never separates a base character from the combining marks that
// follow it.
//
// All functions are idempotent: applying one to its own result returns that
// result unchanged. They are pure functions and safe for concurrent use by
// multiple goroutines. A result may be kept for as long as a host likes: it
// never holds more memory than 256 bytes or about twice its own length,
// whichever is more, however long the string it was made from.
//
// # Limits
//
// The package makes a string inert as display text; it does not make it
// trustworthy. It does not detect homoglyphs or confusable characters, so a
// label may still look like another one. It does not normalize Unicode, so
// two canonically equivalent labels may differ byte for byte. It does not make
// a string safe to use as a file name or path: separators, "..", and device
// names pass through. It does not escape anything for HTML, Markdown, JSON or
// a shell; whoever embeds a label in such a format escapes it there.
//
// Removing every format and default-ignorable character changes some honest
// text as well. An emoji sequence joined by U+200D ZERO WIDTH JOINER shows as
// its separate parts, an emoji followed by the selector U+FE0F may be drawn
// in text style, and the few format characters that are drawn, such as the
// Arabic number sign U+0600, disappear. A label that looks a little different
// is the price of a label that carries no text its reader cannot see.
package label
