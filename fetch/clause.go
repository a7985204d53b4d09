package fetch

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/label"
	"github.com/mcplrefs/refcore/refs"
)

// This file words every failure the fetcher reports. A clause may reach
// the model, so none names an address, a host, a port, a scheme the server
// chose, a content coding, a digest or any other server-sent text; the one
// name it may hold is the host's own name for the server, cleaned and
// bounded, with any uri in it withheld as stubs withhold it. Whatever the
// operator needs beyond that goes into the failure's detail, which only
// the log sees.

// serverText names a server in a clause: quoted, cleaned, without a uri
// (a host may name a server by its connection URL, key and all), and
// bounded.
func serverText(name string) string {
	return strconv.Quote(label.Display(convert.WithoutURIs(name), 64))
}

// speaker is whoever answered a request, as a clause names it: the server
// itself, or, for a reference at one of the server's other allowed
// origins, that origin, which is not the server and is never named.
type speaker struct {
	server string
	other  bool
}

// otherSpeaker is how a clause names an allowed origin other than the
// server's own.
const otherSpeaker = "the origin the reference points to"

// String is the speaker as the subject of a clause.
func (s speaker) String() string {
	if s.other {
		return otherSpeaker
	}
	return "the " + serverText(s.server) + " server"
}

// resay rewords, for a response from another origin, a clause that names
// the server as the one that sent the response. The copier words its
// failures knowing only the server's name; at another origin that would
// blame the server for what the other origin sent. A clause opening with
// the server is said of the other origin instead, as its subject ("the
// origin the reference points to sent ...") or, where it opened with the
// server's possessive, as where the response came from ("from the origin
// the reference points to, the gzip stream ..."). Every other failure is
// returned as it is.
func (s speaker) resay(f *Failure) *Failure {
	if !s.other || f == nil {
		return f
	}
	own := speaker{server: s.server}.String()
	clause, ok := strings.CutPrefix(f.Clause, own+"'s ")
	if ok {
		clause = "from " + otherSpeaker + ", the " + clause
	} else if clause, ok = strings.CutPrefix(f.Clause, own+" "); ok {
		clause = otherSpeaker + " " + clause
	}
	if !ok {
		return f
	}
	cp := *f
	cp.Clause = clause
	return &cp
}

// sized builds a failure about a size: the limit it passed and the bytes
// claimed, announced or read.
func sized(code Code, server, clause string, limit, got int64) *Failure {
	f := fail(code, server, clause)
	f.Limit, f.Got = limit, got
	return f
}

func withDetail(f *Failure, detail string) *Failure {
	f.detail = detail
	return f
}

func failNegativeMax(n int64) *Failure {
	return sized(CodeInvalidRequest, "", "the call asked for a negative max bytes", 0, n)
}

func failWithheld(server string) *Failure {
	return fail(CodeWithheld, server,
		"a server asked that this reference's content never reach the model or its tools, so this host does not fetch it for them")
}

// failUnchecked is failWithheld for a record withheld only because the
// mark store could not be read when it was made: no server is known to
// have marked it.
func failUnchecked(server string) *Failure {
	return fail(CodeWithheld, server,
		"this host could not read its never marks when the reference arrived, so it does not fetch it for the model or its tools")
}

// withheld is the failure for a record a never withholds from the model.
func withheld(rec refs.Record) *Failure {
	if rec.NeverUnconfirmed {
		return failUnchecked(rec.Server())
	}
	return failWithheld(rec.Server())
}

func failWithheldDuring(server string) *Failure {
	return fail(CodeWithheld, server,
		"a server marked this reference never while it was being fetched, so its content was dropped and nothing was kept for the model")
}

// failWithheldInShared is the host's own answer when a mark landed while
// the copy went to the shared store, which a host-only store keeps free
// of never references: a fetch that starts now saves apart.
func failWithheldInShared(server string) *Failure {
	f := fail(CodeWithheld, server,
		"a server marked this reference never while its copy was being saved beside copies the model may see, so that copy was dropped; a new fetch for the host saves it apart")
	f.Remedy = Remedy{kind: RemedyTryLater}
	return f
}

// failUncheckedDuring answers a download stopped, or kept from the model,
// because the mark store could not be read during it while no mark was
// known: it counted as a mark, and may not be one.
func failUncheckedDuring(server string) *Failure {
	f := fail(CodeWithheld, server,
		"this host could not read its never marks while the reference was being fetched, so it did not give this fetch's content to the model or its tools")
	f.Remedy = Remedy{kind: RemedyTryLater}
	return f
}

// failUncheckedNow refuses a model's fetch, before dialing, of a reference
// no mark is known for while the mark store cannot be read.
func failUncheckedNow(server string) *Failure {
	f := fail(CodeWithheld, server,
		"this host cannot read its never marks right now, so it does not fetch this reference for the model or its tools")
	f.Remedy = Remedy{kind: RemedyTryLater}
	return f
}

func failNoServer() *Failure {
	return fail(CodeNoServer, "",
		"no server delivered this reference, so there is no origin this host could fetch it from")
}

func failUnknownServer(server string) *Failure {
	return fail(CodeUnknownServer, server,
		"the reference came from the "+serverText(server)+" server, which this host no longer has")
}

func failServerLookup(server, detail string) *Failure {
	return withDetail(fail(CodeServerLookup, server,
		"this host could not look up the "+serverText(server)+" server the reference came from"), detail)
}

func failNoNetworkAddress(server string) *Failure {
	return fail(CodeNoNetworkAddress, server,
		"the "+serverText(server)+" server is reached without a network address, and this host allows no other origin for its references")
}

// failCrossOriginNoAddress refuses a reference of a server with no
// network address (stdio) that points to none of others, the origins the
// host allows for that server's references. A server with none is refused
// earlier, by failNoNetworkAddress.
func failCrossOriginNoAddress(server string, ref *url.URL, others []origin) *Failure {
	return withDetail(fail(CodeCrossOrigin, server,
		"the "+serverText(server)+" server is reached without a network address, and the reference points to none of the other origins this host allows for its references (the same scheme, host and port)"),
		"reference origin "+refOriginText(ref)+", no dialed origin, "+othersText(others))
}

func failBadURI(server string) *Failure {
	return fail(CodeBadURI, server, "the reference's address is not a URL this host can read")
}

func failBadServerURI(server string) *Failure {
	return fail(CodeBadServerURI, server,
		"the "+serverText(server)+" server's own address is not an http, https, ws or wss URL this host can read, so there is no origin to fetch the reference from")
}

// failBadOtherOrigin refuses every reference of a server whose list of
// other allowed origins holds an entry that does not read as one. The
// detail gives the entry's position and fault, never the entry itself.
func failBadOtherOrigin(server string, i int, why string) *Failure {
	f := fail(CodeBadServerURI, server,
		"this host's list of other origins for the "+serverText(server)+" server's references holds an entry it cannot read as an http or https origin, so it fetches none of that server's references")
	f.Remedy = Remedy{kind: RemedyAskOperator, task: taskCorrectOtherOrigins}
	return withDetail(f, "Server.UnauthenticatedOrigins["+strconv.Itoa(i)+"] "+why)
}

func failCredentials(server string) *Failure {
	return fail(CodeCredentialsInURL, server,
		"the reference's address embeds a user name or password, and this host never sends those")
}

// knownSchemes are the schemes a clause may name; any other is a server's
// own text and is not repeated.
var knownSchemes = map[string]bool{"file": true, "ftp": true, "data": true, "ws": true, "wss": true, "javascript": true, "mailto": true}

func failScheme(server, scheme string) *Failure {
	clause := "the reference's address uses a scheme other than http: or https:, the only ones this host fetches over"
	switch s := strings.ToLower(scheme); {
	case s == "":
		clause = "the reference's address names no scheme, and this host fetches over http: and https: only"
	case knownSchemes[s]:
		clause = "the reference's address uses the " + s + ": scheme, and this host fetches over http: and https: only"
	}
	return fail(CodeSchemeNotAllowed, server, clause)
}

// failCrossOrigin refuses a reference at neither the server's dialed
// origin nor one of others, the other origins the host allows for it.
func failCrossOrigin(server string, ref *url.URL, own origin, others []origin) *Failure {
	clause := "the reference points to another origin than the one the " + serverText(server) +
		" server was dialed at, and this host fetches only from that origin (the same scheme, host and port)"
	detail := "reference origin " + refOriginText(ref) + ", dialed origin " + own.display()
	if len(others) > 0 {
		clause = "the reference points neither to the origin the " + serverText(server) +
			" server was dialed at nor to one of the other origins this host allows for its references (the same scheme, host and port)"
		detail += ", " + othersText(others)
	}
	return withDetail(fail(CodeCrossOrigin, server, clause), detail)
}

// refOriginText writes a reference's origin for the operator.
func refOriginText(ref *url.URL) string {
	if o, ok := originOf(ref); ok {
		return o.display()
	}
	return "an address with no origin"
}

// othersText lists the other allowed origins for the operator, bounded.
func othersText(others []origin) string {
	const shown = 8
	parts := make([]string, 0, min(len(others), shown)+1)
	for i, o := range others {
		if i == shown {
			parts = append(parts, "and "+strconv.Itoa(len(others)-shown)+" more")
			break
		}
		parts = append(parts, o.display())
	}
	return "other allowed origins " + strings.Join(parts, " ")
}

func failExpired(server string, why convert.ExpiryReason) *Failure {
	return fail(CodeExpired, server, "this reference can no longer be fetched: "+why.Clause())
}

// Claims checked before dialing.

func failClaimOverCeiling(server string, claim, ceiling int64) *Failure {
	return sized(CodeHostCeiling, server,
		"the reference claims "+bytesText(claim)+", more than the "+bytesText(ceiling)+" this host fetches for any one reference",
		ceiling, claim)
}

func failBudgetSpent(server string, spent, limit int64) *Failure {
	return sized(CodeBudgetSpent, server,
		"this host's fetch budget for the "+serverText(server)+" server is used up for now ("+ofText(spent, limit)+")",
		limit, spent)
}

func failClaimOverBudget(server string, claim, spent, limit int64) *Failure {
	return sized(CodeOverBudget, server,
		"the reference claims "+bytesText(claim)+", but only "+remainText(limit-spent)+" of this host's fetch budget for the "+serverText(server)+" server for now",
		limit-spent, claim)
}

func failClaimOverMax(server string, claim, max, upTo int64) *Failure {
	f := sized(CodeTooLarge, server,
		"the reference claims "+bytesText(claim)+", more than the "+bytesText(max)+" this call allows",
		max, claim)
	f.Remedy = largerMaxBytes(claim, upTo)
	return f
}

// Sizes the response announced in its Content-Length.

func failAnnouncedOverCeiling(s speaker, n, ceiling int64) *Failure {
	return sized(CodeHostCeiling, s.server,
		s.String()+" announced "+bytesText(n)+", more than the "+bytesText(ceiling)+" this host fetches for any one reference, so nothing was read",
		ceiling, n)
}

func failAnnouncedOverBudget(s speaker, n, spent, limit int64) *Failure {
	whose := "it"
	if s.other {
		whose = "the " + serverText(s.server) + " server"
	}
	return sized(CodeOverBudget, s.server,
		s.String()+" announced "+bytesText(n)+", but only "+remainText(limit-spent)+" of this host's fetch budget for "+whose+" for now, so nothing was read",
		limit-spent, n)
}

func failAnnouncedOverMax(s speaker, n, max int64, r Remedy) *Failure {
	f := sized(CodeTooLarge, s.server,
		s.String()+" announced "+bytesText(n)+", more than the "+bytesText(max)+" this call allows, so nothing was read",
		max, n)
	f.Remedy = r
	return f
}

// Sizes actually read.

func failReadOverCeiling(server string, n, ceiling int64) *Failure {
	return sized(CodeHostCeiling, server,
		"the download reached "+bytesText(n)+", past the "+bytesText(ceiling)+" this host fetches for any one reference, so the transfer was cut off and its bytes discarded",
		ceiling, n)
}

func failWireOverDecoded(server string, n, decoded int64) *Failure {
	f := fail(CodeBadEncoding, server,
		"the "+serverText(server)+" server sent "+bytesText(n)+" of encoded data that decoded to only "+bytesText(decoded)+", more than twice what this download may receive, so the transfer was cut off and its bytes discarded")
	f.Remedy = Remedy{kind: RemedyTryLaterThenFreshReference}
	return f
}

func failReadOverBudget(server string, spent, limit int64) *Failure {
	return sized(CodeOverBudget, server,
		"this host's fetch budget for the "+serverText(server)+" server ran out during the download ("+ofText(spent, limit)+"), so the transfer was cut off and its bytes discarded",
		limit, spent)
}

func failReadOverMax(server string, n, max int64, r Remedy) *Failure {
	f := sized(CodeTooLarge, server,
		"the download reached "+bytesText(n)+", past the "+bytesText(max)+" this call allows, so the transfer was cut off and its bytes discarded",
		max, n)
	f.Remedy = r
	return f
}

// Answers.

func withStatus(f *Failure, status int) *Failure {
	f.Status = status
	return f
}

func failRedirect(s speaker, status int) *Failure {
	return withStatus(fail(CodeRedirect, s.server,
		s.String()+" answered "+statusText(status)+", a redirect, and this host never follows redirects"), status)
}

func failStatus(server string, status int) *Failure {
	return failStatusFrom(speaker{server: server}, status)
}

func failStatusFrom(s speaker, status int) *Failure {
	f := withStatus(fail(CodeStatus, s.server, s.String()+" answered "+statusText(status)), status)
	f.Remedy = statusRemedy(status)
	if s.other {
		f.Remedy = otherStatusRemedy(status)
	}
	return f
}

func failNoContent(s speaker, status int) *Failure {
	return withStatus(fail(CodeNoContent, s.server,
		s.String()+" answered "+statusText(status)+" without any content"), status)
}

// statusRemedy is the one mapping from a status class to what a later call
// can do.
func statusRemedy(status int) Remedy {
	switch {
	case status == http.StatusUnauthorized:
		return Remedy{kind: RemedyAskOperator, task: taskCheckCredentials}
	case status == http.StatusForbidden:
		return Remedy{kind: RemedyFreshReferenceThenAsk, task: taskCheckCredentials}
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusLocked,
		status == http.StatusTooEarly, status == http.StatusTooManyRequests:
		return Remedy{kind: RemedyTryLater}
	case status == http.StatusNotImplemented, status == http.StatusHTTPVersionNotSupported:
		return Remedy{kind: RemedyNothing}
	case status >= 500 && status <= 599:
		return Remedy{kind: RemedyTryLater}
	}
	return codes[CodeStatus].remedy
}

// otherStatusRemedy is statusRemedy for an answer from another origin
// than the server's own. This host sends that origin no credential, so
// an operator checking the server's credentials changes nothing there;
// a new reference (a newly signed address, say) may.
func otherStatusRemedy(status int) Remedy {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return Remedy{kind: RemedyFreshReference}
	}
	return statusRemedy(status)
}

// statusText writes "HTTP 404 (Not Found)": the number the server sent and
// Go's own name for it, never the server's reason phrase.
func statusText(status int) string {
	s := "HTTP " + strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		s += " (" + t + ")"
	}
	return s
}

func failUnknownCoding(s speaker, coding string) *Failure {
	return withDetail(fail(CodeBadEncoding, s.server,
		s.String()+" sent the content in a coding this host cannot decode"),
		"content coding "+codingNames(coding))
}

// codingNames is the Content-Encoding value coding (lower-cased) for the
// operator's log: each registered coding it lists is named, and anything
// else is "another coding". The header is the server's to write, and a
// hostile one echoes the request's bearer token or query into it.
func codingNames(coding string) string {
	var names []string
	for part := range strings.SplitSeq(coding, ",") {
		name := strings.TrimSpace(part)
		if !knownCodings[name] {
			name = "another coding"
		}
		if len(names) > 0 && names[len(names)-1] == name {
			continue
		}
		if len(names) == 8 {
			names = append(names, "…")
			break
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// knownCodings are the names in IANA's HTTP Content Coding Registry.
var knownCodings = map[string]bool{
	"aes128gcm": true, "br": true, "compress": true, "dcb": true, "dcz": true,
	"deflate": true, "exi": true, "gzip": true, "identity": true,
	"pack200-gzip": true, "x-compress": true, "x-gzip": true, "zstd": true,
}

func failCorruptGzip(server string, n int64) *Failure {
	f := fail(CodeBadEncoding, server,
		"the "+serverText(server)+" server's gzip stream stopped decoding after "+bytesText(n)+", so nothing was kept")
	f.Remedy = Remedy{kind: RemedyTryLaterThenFreshReference}
	return f
}

func failDigest(server, claimed, got string) *Failure {
	return withDetail(fail(CodeDigestMismatch, server,
		"the bytes that arrived do not match the reference's digest, so they were not kept"),
		"claimed "+oneLine(claimed, 60)+", received "+got)
}

func failTimeout(server string, allowed time.Duration) *Failure {
	if allowed < time.Millisecond { // the caller's deadline, already passed
		return fail(CodeTimeout, server, "the call's deadline had passed before the fetch could begin")
	}
	return fail(CodeTimeout, server, "the fetch took longer than the "+secondsText(allowed)+" it was allowed")
}

func failCanceled(server string) *Failure {
	return fail(CodeCanceled, server, "the caller canceled the fetch before it finished")
}

func failRequest(s speaker, c cause) *Failure {
	words := c.words
	if s.other {
		// The fixed words say "the server's" for whoever answered; at
		// another origin that is the origin, not the MCPL server.
		words = strings.Replace(words, "the server's ", "its ", 1)
	}
	return withDetail(fail(CodeNetwork, s.server,
		"the request to "+s.String()+" failed: "+words), c.detail)
}

func failBrokeOff(server string, n int64, c cause) *Failure {
	return withDetail(fail(CodeNetwork, server,
		"the "+serverText(server)+" server's response broke off after "+bytesText(n)+": "+c.words+"; nothing was kept"), c.detail)
}

func failPinning(server string) *Failure {
	f := fail(CodeNetwork, server,
		"this host cannot hold the request to the addresses its connection to the "+serverText(server)+" server resolved, because the configured HTTP transport does not allow it")
	f.Remedy = Remedy{kind: RemedyAskOperator, task: taskCheckConnection}
	return f
}

func failStorage(server, detail string) *Failure {
	return withDetail(fail(CodeStorage, server,
		"this host could not store the reference's content, so nothing was kept"), detail)
}

func failGone(server string) *Failure {
	return fail(CodeGone, server,
		"this host let go of the reference while it was being fetched, so the copy was not kept")
}

func failReissued(server string) *Failure {
	f := fail(CodeGone, server,
		"a server sent a new digest for the reference while it was being fetched, so bytes checked against the old one were not kept")
	f.Remedy = Remedy{kind: RemedyTryLater}
	return f
}

// ofText writes a running total against a limit, as "1,001 of 1,000
// bytes".
func ofText(n, limit int64) string {
	return strings.TrimSuffix(bytesText(n), " bytes") + " of " + bytesText(limit)
}

// secondsText writes a duration as "60 seconds", "1 second" or "0.25
// seconds".
func secondsText(d time.Duration) string {
	d = d.Round(time.Millisecond)
	if d == time.Second {
		return "1 second"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds"
}

// oneLine bounds an operator-facing reason to one cleaned line.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return label.Display(s, max)
}
