// Package changelog turns the per-change fragments kept in changelog.d/
// into release sections of CHANGELOG.md.
//
// A fragment is one Markdown file named <slug>.<type>.md, where type is one
// of breaking, security, changed, added, fixed or removed (see [Types]).
// [ParseDir] reads and checks a fragment directory, [Render] formats
// fragments as one release section, and [Assemble] places that section at
// the top of the existing changelog. The command in cmd/changelog wires the
// three together; this package itself never writes or deletes files.
//
// The package guarantees:
//
//   - ParseDir accepts a directory only when every entry in it is a valid
//     fragment, the README.md that documents the rules, or a hidden file
//     (a name starting with "."). Every bad entry is reported, each as an
//     [*Error] that names the file and unwraps to one of the sentinel errors,
//     so a bad fragment cannot slip through unnoticed.
//   - A valid fragment has a non-empty body whose opening paragraph ends
//     like a sentence, and a breaking fragment's first sentence says who has
//     to act (see [Actors]).
//   - Output is deterministic: the same fragments always render to the same
//     bytes, grouped in the order of [Types] and, from ParseDir, sorted by
//     slug within each group.
//   - Assemble only inserts. Existing changelog text is kept as it is,
//     apart from the blank lines around the inserted section and at the end.
//
// All functions are pure apart from reading the [fs.FS] given to ParseDir,
// and are safe for concurrent use.
package changelog
