package fetch

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/label"
)

// This file builds every failure the fetcher reports. Each clause is a
// sentence about the reference or its server that stays true wherever it is
// read; none quotes a uri, a query, a userinfo part or a credential.

// serverText names a server in a clause: quoted, cleaned and bounded.
func serverText(name string) string {
	return strconv.Quote(label.Display(name, 64))
}

// sized builds a failure about a size: the limit it passed and the bytes
// claimed, announced or read.
func sized(server string, code Code, clause string, r Remedy, limit, got int64) *Failure {
	f := NewFailure(code, clause, r)
	f.Limit, f.Got = limit, got
	return withServer(f, server)
}

func withServer(f *Failure, server string) *Failure {
	f.Server = server
	return f
}

func failWithheld(server string) *Failure {
	return withServer(NewFailure(CodeWithheld,
		"a server asked that this reference's content never reach the model or its tools, so this host does not fetch it",
		NothingWillChange()), server)
}

func failWithheldDuring(server string) *Failure {
	return withServer(NewFailure(CodeWithheld,
		"a server marked this reference never while it was being fetched, so its content was dropped and nothing was kept",
		NothingWillChange()), server)
}

func failNoServer() *Failure {
	return NewFailure(CodeNoServer,
		"no server delivered this reference, so there is no origin this host could fetch it from",
		WaitForFreshReference())
}

func failUnknownServer(server string) *Failure {
	return withServer(NewFailure(CodeUnknownServer,
		"the reference came from the "+serverText(server)+" server, which this host no longer has",
		AskOperator(TaskAddServer)), server)
}

func failServerLookup(server string) *Failure {
	return withServer(NewFailure(CodeServerLookup,
		"this host could not look up the "+serverText(server)+" server the reference came from",
		TryLaterThenAsk(TaskCheckConnection)), server)
}

func failNoNetworkAddress(server string) *Failure {
	return withServer(NewFailure(CodeNoNetworkAddress,
		"the "+serverText(server)+" server is reached over stdio or another channel without a network address, so the reference has no location this host can request",
		NothingWillChange()), server)
}

func failBadURI(server string) *Failure {
	return withServer(NewFailure(CodeBadURI,
		"the reference's address is not a URL this host can read",
		NothingWillChange()), server)
}

func failBadServerURI(server string) *Failure {
	return withServer(NewFailure(CodeBadServerURI,
		"the "+serverText(server)+" server's own address is not an http, https, ws or wss URL this host can read, so there is no origin to fetch the reference from",
		AskOperator(TaskCorrectServerAddress)), server)
}

func failCredentials(server string) *Failure {
	return withServer(NewFailure(CodeCredentialsInURL,
		"the reference's address embeds a user name or password, and this host never sends those",
		NothingWillChange()), server)
}

func failScheme(server, scheme string) *Failure {
	var clause string
	if scheme == "" {
		clause = "the reference's address names no scheme, and this host fetches over http: and https: only"
	} else {
		clause = "the reference's address uses the " + scheme + ": scheme, and this host fetches over http: and https: only"
	}
	return withServer(NewFailure(CodeSchemeNotAllowed, clause, NothingWillChange()), server)
}

func failCrossOrigin(server string, ref, own origin) *Failure {
	return withServer(NewFailure(CodeCrossOrigin,
		"the reference points to "+ref.display()+", while the "+serverText(server)+" server was dialed at "+own.display()+
			"; this host fetches only from the origin it dialed, meaning the same scheme, host and port",
		NothingWillChange()), server)
}

func failExpired(server string, why convert.ExpiryReason) *Failure {
	var clause string
	switch why {
	case convert.ExpiryUnparseable:
		clause = "the reference counts as expired: its expiry time is not a date this host can read"
	case convert.ExpiryRejected:
		clause = "the reference counts as expired: its expiry field was malformed and was set aside"
	default:
		clause = "the reference is expired: its expiry time has passed"
	}
	return withServer(NewFailure(CodeExpired, clause, WaitForFreshReference()), server)
}

// Claims checked before dialing.

func failClaimOverCeiling(server string, claim, ceiling int64) *Failure {
	return sized(server, CodeHostCeiling,
		"the reference claims "+bytesText(claim)+", more than the "+bytesText(ceiling)+" this host fetches for any one reference",
		HostCeilingHolds(), ceiling, claim)
}

func failBudgetSpent(server string, spent, limit int64) *Failure {
	return sized(server, CodeBudgetSpent,
		"this host's fetch budget for the "+serverText(server)+" server is used up ("+ofText(spent, limit)+")",
		AskOperator(TaskRenewBudget), limit, spent)
}

func failClaimOverBudget(server string, claim, spent, limit int64) *Failure {
	return sized(server, CodeOverBudget,
		"the reference claims "+bytesText(claim)+", but only "+remainText(limit-spent)+" of this host's fetch budget for the "+serverText(server)+" server",
		AskOperator(TaskRenewBudget), limit-spent, claim)
}

func failClaimOverMax(server string, claim, max, upTo int64) *Failure {
	return sized(server, CodeTooLarge,
		"the reference claims "+bytesText(claim)+", more than the "+bytesText(max)+" this call allows",
		PassLargerMaxBytes(claim, upTo), max, claim)
}

// Sizes the response announced in its Content-Length.

func failAnnouncedOverCeiling(server string, n, ceiling int64) *Failure {
	return sized(server, CodeHostCeiling,
		"the "+serverText(server)+" server announced "+bytesText(n)+", more than the "+bytesText(ceiling)+" this host fetches for any one reference, so nothing was read",
		HostCeilingHolds(), ceiling, n)
}

func failAnnouncedOverBudget(server string, n, spent, limit int64) *Failure {
	return sized(server, CodeOverBudget,
		"the "+serverText(server)+" server announced "+bytesText(n)+", but only "+remainText(limit-spent)+" of this host's fetch budget for it, so nothing was read",
		AskOperator(TaskRenewBudget), limit-spent, n)
}

func failAnnouncedOverMax(server string, n, max int64, r Remedy) *Failure {
	return sized(server, CodeTooLarge,
		"the "+serverText(server)+" server announced "+bytesText(n)+", more than the "+bytesText(max)+" this call allows, so nothing was read",
		r, max, n)
}

// Sizes actually read.

func failReadOverCeiling(server string, n, ceiling int64) *Failure {
	return sized(server, CodeHostCeiling,
		"the download reached "+bytesText(n)+", past the "+bytesText(ceiling)+" this host fetches for any one reference, so the transfer was cut off and its bytes discarded",
		HostCeilingHolds(), ceiling, n)
}

func failWireOverCeiling(server string, n, limit int64) *Failure {
	return sized(server, CodeHostCeiling,
		"the "+serverText(server)+" server sent "+bytesText(n)+" of encoded data, more than this host reads for any one reference, so the transfer was cut off and its bytes discarded",
		HostCeilingHolds(), limit, n)
}

func failReadOverBudget(server string, spent, limit int64) *Failure {
	return sized(server, CodeOverBudget,
		"this host's fetch budget for the "+serverText(server)+" server ran out during the download ("+ofText(spent, limit)+"), so the transfer was cut off and its bytes discarded",
		AskOperator(TaskRenewBudget), limit, spent)
}

func failReadOverMax(server string, n, max int64, r Remedy) *Failure {
	return sized(server, CodeTooLarge,
		"the download reached "+bytesText(n)+", past the "+bytesText(max)+" this call allows, so the transfer was cut off and its bytes discarded",
		r, max, n)
}

// Answers.

func failRedirect(server string, status int) *Failure {
	f := NewFailure(CodeRedirect,
		"the "+serverText(server)+" server answered "+statusText(status)+", a redirect, and this host never follows redirects",
		NothingWillChange())
	f.Status = status
	return withServer(f, server)
}

func failStatus(server string, status int) *Failure {
	f := NewFailure(CodeStatus,
		"the "+serverText(server)+" server answered "+statusText(status),
		statusRemedy(status))
	f.Status = status
	return withServer(f, server)
}

func failNoContent(server string, status int) *Failure {
	f := NewFailure(CodeNoContent,
		"the "+serverText(server)+" server answered "+statusText(status)+" without any content",
		WaitForFreshReference())
	f.Status = status
	return withServer(f, server)
}

// statusRemedy is the one mapping from a status class to what a later call
// can do (F11).
func statusRemedy(status int) Remedy {
	switch {
	case status == http.StatusUnauthorized:
		return AskOperator(TaskCheckCredentials)
	case status == http.StatusForbidden:
		return WaitForFreshReferenceThenAsk(TaskCheckCredentials)
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusLocked,
		status == http.StatusTooEarly, status == http.StatusTooManyRequests:
		return TryLater()
	case status == http.StatusNotImplemented, status == http.StatusHTTPVersionNotSupported:
		return NothingWillChange()
	case status >= 500 && status <= 599:
		return TryLater()
	}
	return WaitForFreshReference()
}

func statusText(status int) string {
	s := "HTTP " + strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		s += " (" + t + ")"
	}
	return s
}

func failUnknownCoding(server, coding string) *Failure {
	c := label.Display(coding, 40)
	return withServer(NewFailure(CodeBadEncoding,
		"the "+serverText(server)+" server sent the content in the "+strconv.Quote(c)+" coding, which this host cannot decode",
		NothingWillChange()), server)
}

func failCorruptGzip(server string, n int64) *Failure {
	return withServer(NewFailure(CodeBadEncoding,
		"the "+serverText(server)+" server's gzip stream stopped decoding after "+bytesText(n)+", so nothing was kept",
		TryLaterThenWaitForFreshReference()), server)
}

func failDigest(server, claimed, got string) *Failure {
	return withServer(NewFailure(CodeDigestMismatch,
		"the bytes that arrived hash to "+shortDigest(got)+", not to the reference's digest "+shortDigest(claimed)+", so they were not kept",
		TryLaterThenWaitForFreshReference()), server)
}

// shortDigest shows the start of a sha256:<base64url> digest.
func shortDigest(d string) string {
	const keep = len("sha256:") + 12
	if len(d) > keep {
		return d[:keep] + "…"
	}
	return d
}

func failTimeout(server string, allowed time.Duration) *Failure {
	return withServer(NewFailure(CodeTimeout,
		"the fetch took longer than the "+secondsText(allowed)+" it was allowed",
		TryLater()), server)
}

func failCanceled(server string) *Failure {
	return withServer(NewFailure(CodeCanceled,
		"the caller canceled the fetch before it finished",
		TryLater()), server)
}

func failRequest(server, cause string) *Failure {
	return withServer(NewFailure(CodeNetwork,
		"the request to the "+serverText(server)+" server failed: "+cause,
		TryLaterThenAsk(TaskCheckConnection)), server)
}

func failBrokeOff(server string, n int64, cause string) *Failure {
	return withServer(NewFailure(CodeNetwork,
		"the "+serverText(server)+" server's response broke off after "+bytesText(n)+": "+cause+"; nothing was kept",
		TryLaterThenAsk(TaskCheckConnection)), server)
}

func failPinning(server string) *Failure {
	return withServer(NewFailure(CodeNetwork,
		"this host cannot hold the request to the addresses its connection to the "+serverText(server)+" server resolved, because the configured HTTP transport does not allow it",
		AskOperator(TaskCheckConnection)), server)
}

func failStorage(server, why string) *Failure {
	f := withServer(NewFailure(CodeStorage,
		"this host could not store the reference's content, so nothing was kept",
		AskOperator(TaskCheckStorage)), server)
	f.why = why
	return f
}

func failStale(server string) *Failure {
	return withServer(NewFailure(CodeStale,
		"this host let go of the reference while it was being fetched, so the copy was not kept",
		WaitForFreshReference()), server)
}

func failReissued(server string) *Failure {
	return withServer(NewFailure(CodeStale,
		"a server sent a new digest for the reference while it was being fetched, so bytes checked against the old one were not kept",
		TryLater()), server)
}

func failGone(server string) *Failure {
	return withServer(NewFailure(CodeStale,
		"this host no longer keeps a record of the reference, so a copy could not be saved for it",
		WaitForFreshReference()), server)
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
