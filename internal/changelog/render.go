package changelog

import (
	"strings"
)

// otherTitle heads the group of fragments whose Type is not one of [Types].
// ParseDir never returns such fragments; the group exists so that Render
// drops nothing it is handed.
const otherTitle = "Other"

// Render formats frags as one release section of a changelog:
//
//	## <version> (<date>)
//
//	### Breaking
//
//	- <body of the first breaking fragment>
//
// The heading omits " (<date>)" when date is empty, as for an unreleased
// preview. Groups follow the order of [Types] with titles Breaking,
// Security, Changed, Added, Fixed and Removed; groups without fragments are
// left out, and fragments of an unknown type come last under "Other".
// Within a group, fragments keep their order in frags (ParseDir sorts them
// by slug). Each fragment becomes one list item; lines after the first are
// indented so that multi-paragraph bodies stay inside the item.
//
// With no fragments the section is the heading alone. The result ends with
// a single newline.
func Render(version, date string, frags []Fragment) string {
	var b strings.Builder
	b.WriteString("## ")
	b.WriteString(version)
	if date != "" {
		b.WriteString(" (")
		b.WriteString(date)
		b.WriteString(")")
	}
	b.WriteString("\n")

	titles := make([]string, len(groups)+1)
	for i, g := range groups {
		titles[i] = g.title
	}
	titles[len(groups)] = otherTitle

	byRank := make([][]Fragment, len(titles))
	for _, f := range frags {
		r := typeRank(f.Type)
		byRank[r] = append(byRank[r], f)
	}
	for r, items := range byRank {
		if len(items) == 0 {
			continue
		}
		b.WriteString("\n### ")
		b.WriteString(titles[r])
		b.WriteString("\n\n")
		for _, f := range items {
			writeItem(&b, f.Body)
		}
	}
	return b.String()
}

// writeItem writes body as a Markdown list item.
func writeItem(b *strings.Builder, body string) {
	body = strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))
	for i, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, " \t")
		switch {
		case i == 0:
			b.WriteString("- ")
		case line != "":
			b.WriteString("  ")
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
}

// Assemble returns the changelog text existing with section inserted as the
// newest release.
//
// The section goes after the preamble (the "# Changelog" title and any
// introduction) and before the first level-2 heading ("## ..."), which is
// the previous newest release, so releases read newest first. A level-2
// heading titled "Unreleased" is not a release: it and the text under it
// stay above the new section. Headings inside fenced code blocks are
// ignored. Without any release heading the section is appended at the end;
// when existing is empty or white space, a "# Changelog" title is supplied.
//
// Apart from the blank lines around the section and at the very end, which
// are normalised, existing text is kept unchanged. The result ends with a
// single newline.
func Assemble(existing, section string) string {
	if strings.TrimSpace(existing) == "" {
		existing = "# Changelog\n"
	}
	section = strings.Trim(section, "\r\n")

	lines := strings.SplitAfter(existing, "\n")
	at := len(lines)
	fence := ""
	for i, line := range lines {
		text := strings.TrimRight(line, "\r\n")
		if fence != "" {
			if strings.HasPrefix(strings.TrimLeft(text, " "), fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOpener(text); f != "" {
			fence = f
			continue
		}
		title, ok := level2Title(text)
		if !ok || strings.EqualFold(title, "Unreleased") {
			continue
		}
		at = i
		break
	}

	head := strings.TrimRight(strings.Join(lines[:at], ""), " \t\r\n")
	tail := strings.TrimRight(strings.Join(lines[at:], ""), " \t\r\n")

	var b strings.Builder
	if head != "" {
		b.WriteString(head)
		b.WriteString("\n\n")
	}
	b.WriteString(section)
	b.WriteString("\n")
	if tail != "" {
		b.WriteString("\n")
		b.WriteString(tail)
		b.WriteString("\n")
	}
	return b.String()
}

// fenceOpener returns the fence marker ("```" or "~~~") if line opens a
// fenced code block, or "".
func fenceOpener(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return ""
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(s, f) {
			return f
		}
	}
	return ""
}

// level2Title reports whether line is an ATX level-2 heading and returns its
// text without the markers.
func level2Title(line string) (string, bool) {
	if line == "##" {
		return "", true
	}
	rest, ok := strings.CutPrefix(line, "## ")
	if !ok {
		return "", false
	}
	title := strings.TrimSpace(rest)
	title = strings.TrimSpace(strings.TrimRight(title, "#"))
	return title, true
}
