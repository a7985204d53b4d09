package conformance

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// SplitContent reads what a server author or host author hands the
// validate and render commands: one block, an array of blocks, or a whole
// tool result ({"content": [...]}).
func SplitContent(data []byte) ([]json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(data))
	if trimmed == "" {
		return nil, errors.New("no input")
	}
	switch trimmed[0] {
	case '[':
		var blocks []json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &blocks); err != nil {
			return nil, err
		}
		return blocks, nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &obj); err != nil {
			return nil, err
		}
		if content, ok := obj["content"]; ok {
			if _, typed := obj["type"]; !typed {
				var blocks []json.RawMessage
				if err := json.Unmarshal(content, &blocks); err != nil {
					return nil, fmt.Errorf("content: %w", err)
				}
				return blocks, nil
			}
		}
		return []json.RawMessage{json.RawMessage(trimmed)}, nil
	}
	return nil, errors.New("input is not a block, an array of blocks or a tool result")
}

// ValidateContent reports, per block, the strict schema verdict and
// the host's reading (kind, rejected fields). ok is false when any block is
// schema-invalid. It is [ValidateContentWith] without advice.
func ValidateContent(data []byte) (report string, ok bool, err error) {
	return ValidateContentWith(data, ValidateOptions{})
}

// ValidateOptions chooses what [ValidateContentWith] reports beyond the
// strict verdict and the host's reading.
type ValidateOptions struct {
	// Advice adds, under each block, the advisories [Advise] gives for it,
	// one line each, opening "advice: ". They never change ok.
	Advice bool
	// Now is the time an expiresAt is judged against; the zero value
	// means the current time.
	Now time.Time
}

// ValidateContentWith reports, per block, the strict schema verdict, the
// host's reading (kind, rejected fields) and, with opts.Advice, what the
// schema cannot see. ok is false when any block is schema-invalid. With
// advice, MCP's embedded resource is named as such in its verdict rather
// than left as a bare missing uri.
func ValidateContentWith(data []byte, opts ValidateOptions) (report string, ok bool, err error) {
	blocks, err := SplitContent(data)
	if err != nil {
		return "", false, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	ok = true
	for i, raw := range blocks {
		verdict := "valid"
		if errs := convert.ValidateAll(raw); len(errs) > 0 {
			ok = false
			parts := make([]string, len(errs))
			for j, e := range errs {
				parts[j] = strings.TrimPrefix(e.Error(), "convert: ")
			}
			verdict = "INVALID: " + strings.Join(parts, "; ")
		}
		blk := convert.Classify(raw)
		if opts.Advice && blk.Kind == convert.KindEmbedded {
			verdict += " (this is MCP's embedded resource, not a reference: see the advice)"
		}
		reading := "kind " + string(blk.Kind)
		if names := blk.Testimony.RejectedNames(); len(names) > 0 {
			reading += ", rejected fields " + strings.Join(names, ", ")
		}
		if blk.Invalid != "" {
			reading += " (" + string(blk.Invalid) + ")"
		}
		if blk.Contradiction {
			reading += ", inline data withheld (data beside reference fields)"
		}
		fmt.Fprintf(&b, "block %d: schema %s\n  host reads: %s\n", i, verdict, reading)
		if opts.Advice {
			for _, a := range Advise(raw, now) {
				fmt.Fprintf(&b, "  advice: %s\n", a)
			}
		}
	}
	return b.String(), ok, nil
}

// Advise returns what a server author should change in one block beyond
// what the strict schema checks, judging any expiry at now. Each advisory
// is one line: what was found, with the value, then what a host does with
// it or cannot do without it, then what to change. The advisories, in the
// block's field order:
//
//   - a uri with a user name or password, or with a query or fragment
//     parameter whose name suggests a credential (token, sig, key,
//     password, session, X-Amz-Signature and the like): servers must not
//     put credentials in the uri. The uri is shown with those parts
//     replaced by "…", so the advice never repeats a credential;
//   - a uri whose scheme is not https, that has no scheme or no host, or
//     that does not parse;
//   - a reference without mimeType, sizeBytes or digest;
//   - an expiresAt a host cannot read, or that has passed;
//   - a disposition spelled in another case (or with spaces), which hosts
//     set aside;
//   - MCP's embedded resource and resource link, explained: neither is
//     the reference block the schema describes.
//
// A block of another type (text, inline image or audio) gets none. Values
// are quoted, escaped and clipped. Advise never panics.
func Advise(raw json.RawMessage, now time.Time) []string {
	var props map[string]json.RawMessage
	if json.Unmarshal(raw, &props) != nil {
		return nil
	}
	typ, _ := jsonString(props["type"])
	var a []string
	switch typ {
	case "resource":
		if _, has := props["uri"]; !has {
			if _, nested := props["resource"]; nested {
				a = append(a, adviseEmbedded(props["resource"]))
			}
			return a
		}
	case "resource_link":
		a = append(a, `type "resource_link" is MCP's resource link; hosts read it as a reference with no disposition, but the strict schema knows only "resource": send type "resource", with sizeBytes in place of size`)
	case "image", "audio":
		if _, inline := props["data"]; inline {
			return nil
		}
	default:
		return nil
	}
	if uri, ok := jsonString(props["uri"]); ok {
		a = append(a, adviseURI(uri)...)
	}
	blk := convert.Classify(raw)
	if blk.Kind != convert.KindReference || blk.Link {
		return a
	}
	if _, has := props["mimeType"]; !has {
		example := map[string]string{"image": "image/png", "audio": "audio/wav"}[typ]
		a = append(a, `no mimeType; a host cannot tell the model what kind of payload this is, nor decide whether to open, show or convert it: add one, such as "`+cmp.Or(example, "application/pdf")+`"`)
	}
	if _, has := props["sizeBytes"]; !has {
		a = append(a, "no sizeBytes; a host cannot refuse an oversized payload before fetching it, nor tell the model how large it is: add the payload's length in bytes")
	}
	if _, has := props["digest"]; !has {
		a = append(a, `no digest; a host cannot check that the bytes it fetches are the ones you described: add "sha256:" and the unpadded base64url SHA-256 of the payload`)
	}
	if v, has := props["expiresAt"]; has {
		if s := adviseExpiry(v, now); s != "" {
			a = append(a, s)
		}
	}
	if v, has := props["disposition"]; has {
		if s := adviseDisposition(v); s != "" {
			a = append(a, s)
		}
	}
	return a
}

// serveOwn is the remedy for a credential in a uri.
const serveOwn = "serve the payload at your own origin under the connection's own authentication"

// adviseURI gives the uri's advisories: credentials first, then its
// scheme, host and syntax.
func adviseURI(uri string) []string {
	p := splitURI(uri)
	shown := showClipped(p.shown, 160)
	var a []string
	if p.userinfo {
		a = append(a, "uri "+shown+" carries a user name or password before the host name (hidden here as …: it may be a credential); servers must not put credentials in the uri, where logs, proxies and stubs copy them: remove it, and "+serveOwn)
	}
	for _, c := range p.credentials {
		a = append(a, "uri "+c.where+" parameter "+showClipped(c.name, 40)+" looks like a credential (its value is hidden as … in "+shown+"); servers must not mint credentials into the uri: drop the parameter, and "+serveOwn)
	}
	switch {
	case p.scheme == "":
		a = append(a, "uri "+shown+" has no scheme; a host cannot fetch a relative uri: send an absolute https URL")
	case p.scheme == "http":
		a = append(a, `uri scheme is "http" in `+shown+"; a host may refuse plain http, which also shows the payload to anyone on the way: serve it over https")
	case p.scheme != "https":
		a = append(a, "uri scheme is "+showClipped(p.scheme, 20)+" in "+shown+"; hosts fetch only over https (some also over http) and refuse this one: serve the payload over https")
	}
	if p.scheme == "http" || p.scheme == "https" {
		if u, err := url.Parse(uri); err != nil {
			a = append(a, "uri "+shown+" does not parse as a URL; a host cannot fetch it: percent-encode the characters that need it")
		} else if u.Hostname() == "" {
			a = append(a, "uri "+shown+" names no host; a host cannot fetch it: send an absolute URL with your server's host name")
		}
	}
	return a
}

// uriParts is what advice needs to know of a uri.
type uriParts struct {
	scheme      string // lower-cased, "" when the uri has none
	userinfo    bool   // an "@" in the authority
	credentials []credentialParam
	shown       string // the uri with credential parts replaced by "…"
}

// credentialParam is a query or fragment parameter that looks like a
// credential and carries a value.
type credentialParam struct {
	where string // "query" or "fragment"
	name  string // decoded
}

// splitURI reads a uri by its generic syntax, without needing it to
// parse as a URL, so that even a malformed uri is shown with its
// credentials hidden.
func splitURI(uri string) uriParts {
	var p uriParts
	rest := uri
	var b strings.Builder
	if i := strings.IndexByte(rest, ':'); i > 0 && validScheme(rest[:i]) {
		p.scheme = strings.ToLower(rest[:i])
		b.WriteString(rest[:i+1])
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "//") {
		end := strings.IndexAny(rest[2:], "/?#")
		if end < 0 {
			end = len(rest) - 2
		}
		authority := rest[2 : 2+end]
		b.WriteString("//")
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			p.userinfo = true
			b.WriteString("…")
			authority = authority[at:]
		}
		b.WriteString(authority)
		rest = rest[2+end:]
	}
	fragment, hasFragment := "", false
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, fragment, hasFragment = rest[:i], rest[i+1:], true
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		b.WriteString(rest[:i+1])
		b.WriteString(p.hideCredentials("query", rest[i+1:]))
	} else {
		b.WriteString(rest)
	}
	if hasFragment {
		b.WriteByte('#')
		if strings.Contains(fragment, "=") {
			fragment = p.hideCredentials("fragment", fragment)
		}
		b.WriteString(fragment)
	}
	p.shown = b.String()
	return p
}

// hideCredentials replaces the value of every credential-like parameter
// in a query or fragment with "…", recording each.
func (p *uriParts) hideCredentials(where, params string) string {
	parts := strings.Split(params, "&")
	for i, part := range parts {
		name, value, ok := strings.Cut(part, "=")
		if !ok || value == "" {
			continue
		}
		decoded, err := url.QueryUnescape(name)
		if err != nil {
			decoded = name
		}
		if credentialName(decoded) {
			p.credentials = append(p.credentials, credentialParam{where, decoded})
			parts[i] = name + "=…"
		}
	}
	return strings.Join(parts, "&")
}

// validScheme reports whether s is a uri scheme: a letter, then letters,
// digits, "+", "-" or ".".
func validScheme(s string) bool {
	for i, c := range s {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// credentialNames are parameter names that commonly carry a credential,
// compared lower-cased with "-", "_" and "." removed.
var credentialNames = map[string]bool{
	"key": true, "sig": true, "auth": true, "authorization": true, "session": true,
	"sessionid": true, "pass": true, "passwd": true, "pwd": true, "jwt": true,
	"bearer": true, "hmac": true,
}

// credentialSuffixes end parameter names that commonly carry a credential,
// in the same form: access_token, X-Amz-Signature, api_key,
// client_secret, X-Amz-Credential.
var credentialSuffixes = [...]string{"token", "signature", "secret", "password", "apikey", "credential", "credentials"}

// credentialName reports whether a query parameter's name suggests that
// its value is a credential.
func credentialName(name string) bool {
	n := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' {
			return -1
		}
		return unicode.ToLower(r)
	}, name)
	if credentialNames[n] {
		return true
	}
	if strings.HasSuffix(n, "pagetoken") || strings.HasSuffix(n, "continuationtoken") {
		return false // a position in a listing, not a credential
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// adviseEmbedded explains MCP's embedded resource.
func adviseEmbedded(nested json.RawMessage) string {
	where := ""
	var inner map[string]json.RawMessage
	if json.Unmarshal(nested, &inner) == nil {
		if uri, ok := jsonString(inner["uri"]); ok {
			where = " (uri " + showClipped(splitURI(uri).shown, 160) + ")"
		}
	}
	return `this is MCP's embedded resource: its contents sit inline under "resource"` + where + `, so it is not a reference; hosts show its text or blob like any inline content, and the strict schema asks for a uri at the top level: to send a reference, put uri (with mimeType, sizeBytes and digest) at the top level and leave "resource" out; to send the contents inline, use a text block`
}

// adviseExpiry advises on an expiresAt a host cannot read or that has
// passed at now, and returns "" for one still in the future.
func adviseExpiry(v json.RawMessage, now time.Time) string {
	const remedy = `write an RFC 3339 time such as "2026-09-07T00:00:00Z", or leave expiresAt out`
	s, isString := jsonString(v)
	if !isString {
		found := "an object"
		switch lit := bytes.TrimSpace(v); {
		case len(lit) > 0 && lit[0] == '[':
			found = "an array"
		case len(lit) > 0 && lit[0] != '{':
			found = clipRunes(string(lit), 40) // a number, true, false or null: ASCII
		}
		return "expiresAt " + found + " is not a string, so no host can read it as a date; hosts count the reference as already expired and will not fetch it: " + remedy
	}
	at, ok := convert.ParseExpiry(s)
	if !ok || utf8.RuneCountInString(s) > convert.MaxExpiresAtLen {
		return "expiresAt " + showClipped(s, 40) + " is not a date a host can read; hosts count the reference as already expired and will not fetch it: " + remedy
	}
	if !now.Before(at) {
		return "expiresAt " + showClipped(s, 40) + " has passed; hosts count the reference as expired and will not fetch it: send a time still in the future, or leave expiresAt out if the payload does not expire"
	}
	return ""
}

// adviseDisposition advises on a disposition that means never or ref but
// is spelled in another case or with spaces around it.
func adviseDisposition(v json.RawMessage) string {
	s, ok := jsonString(v)
	if !ok {
		return ""
	}
	for _, d := range [...]convert.Disposition{convert.DispositionNever, convert.DispositionRef} {
		if s == string(d) || !strings.EqualFold(strings.TrimSpace(s), string(d)) {
			continue
		}
		effect := "and apply their own default instead"
		if d == convert.DispositionNever {
			effect = "and do not withhold the payload and uri from the model as you asked"
		}
		return fmt.Sprintf("disposition %s is not %q: values are lower case, so hosts set the field aside %s: write %q", showClipped(s, 40), string(d), effect, string(d))
	}
	return ""
}

// jsonString decodes raw as a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// showClipped quotes s for a report line, escaping what a terminal would
// act on. A string over max code points keeps its head and its tail (where
// a uri's query sits) and says how much it leaves out between them.
func showClipped(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return strconv.Quote(s)
	}
	r := []rune(s)
	head, tail := max/2, max-max/2
	return strconv.Quote(string(r[:head])) + " [" + strconv.Itoa(n-max) + " characters left out] " + strconv.Quote(string(r[n-tail:]))
}

// clipRunes clips s to max code points.
func clipRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "..."
}

// RenderContent shows what a model would see of content: the history text
// of a tool result, and the wake text and blocks of a push event. It
// registers in a throwaway registry and fetches nothing. It is
// [RenderContentWith] under the default names.
func RenderContent(data []byte) (string, error) {
	return RenderContentWith(data, RenderOptions{})
}

// RenderOptions names where rendered content came from, as its stubs'
// provenance shows it. An empty field takes its default.
type RenderOptions struct {
	// Server names the server that sent the content; default
	// "example-server".
	Server string
	// Tool names the tool whose result the content is; default
	// "example_tool".
	Tool string
	// Event names the push event the content is shown as; default
	// "example_event".
	Event string
}

// RenderContentWith is [RenderContent] with the server, tool and event
// names the stubs show.
func RenderContentWith(data []byte, opts RenderOptions) (string, error) {
	blocks, err := SplitContent(data)
	if err != nil {
		return "", err
	}
	server, tool, event := cmp.Or(opts.Server, "example-server"), cmp.Or(opts.Tool, "example_tool"), cmp.Or(opts.Event, "example_event")
	reg, err := refs.New(refs.Config{Rand: &countingRand{}})
	if err != nil {
		return "", err
	}
	conv, err := convert.New(reg, convert.Policy{})
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	toolContent := conv.Ingest(ctx, blocks, convert.Source{Server: server, Lane: convert.LaneToolResult, Tool: tool})
	push := conv.Ingest(ctx, blocks, convert.Source{Server: server, Lane: convert.LanePush, Event: event})
	pushJSON, err := json.MarshalIndent(push.Push(), "", "  ")
	if err != nil {
		return "", err
	}
	return "== tool result history ==\n" + toolContent.History() + "\n\n== push wake ==\n" + push.Wake() +
		"\n\n== push blocks ==\n" + string(pushJSON) + "\n", nil
}

// countingRand gives render stable ids run to run: it is a display tool,
// not a host, and its registry lives for one command.
type countingRand struct{ n byte }

func (c *countingRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	c.n++
	p[len(p)-1] = c.n
	return len(p), nil
}
