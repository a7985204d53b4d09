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
// U+FFFD. It contains no rune for which [Removed] reports true: no control
// character of general category Cc (C0, DEL and C1), no Bidi_Control
// character, and none of the invisible characters that can hide or reorder
// text (zero-width characters, the word joiner and invisible operators, the
// byte order mark, tag characters, and the line and paragraph separators).
// Right-to-left text such as Arabic and Hebrew is kept, and so is inner
// whitespace, except where the whitespace is itself in the removed set (tab,
// newline and the other controls, U+2028, U+2029). Leading and trailing
// whitespace is trimmed. An empty result
// means the label is absent, and callers leave its segment out.
//
// The result of [Bound] and [Display] holds at most the requested number of
// runes, the truncation marker "…" (U+2026) included. Truncation never splits
// a rune and never separates a base character from the combining marks that
// follow it.
//
// All functions are idempotent: applying one to its own result returns that
// result unchanged. They are pure functions and safe for concurrent use by
// multiple goroutines.
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
package label
