package fetch

import (
	"context"

	"github.com/mcplrefs/refcore/label"
)

// Code names one kind of fetch failure. Codes are stable strings, fit for
// logs and metrics (string(code) is the bare code: a Code formats as its
// Error text, "fetch: expired"), and they are the package's only error
// values: test a
// failure with errors.Is(err, fetch.CodeExpired), or read it with
// errors.As into a [*Failure]. A [Servers] implementation returns an error
// wrapping [CodeUnknownServer] or [CodeNoNetworkAddress].
type Code string

// The failure codes, in the order the fetcher checks them.
const (
	// CodeInvalidRequest: the request itself is wrong, such as a negative
	// max bytes.
	CodeInvalidRequest Code = "invalid-request"
	// CodeWithheld: a server marked the reference never, and the content
	// may not reach the model or its tools.
	CodeWithheld Code = "withheld"
	// CodeNoServer: no server delivered the reference.
	CodeNoServer Code = "no-server"
	// CodeUnknownServer: the host no longer has the server the reference
	// came from.
	CodeUnknownServer Code = "unknown-server"
	// CodeServerLookup: the host's [Servers] failed for another reason.
	CodeServerLookup Code = "server-lookup"
	// CodeNoNetworkAddress: the server is not reached over a network (for
	// example over stdio), and the host allows no origin for it.
	CodeNoNetworkAddress Code = "no-network-address"
	// CodeBadURI: the reference's address is not a URL the host can read.
	CodeBadURI Code = "bad-uri"
	// CodeBadServerURI: the server's own address does not parse.
	CodeBadServerURI Code = "bad-server-uri"
	// CodeCredentialsInURL: the reference's address carries a user name
	// or password.
	CodeCredentialsInURL Code = "credentials-in-url"
	// CodeSchemeNotAllowed: the reference's scheme is not http or https.
	CodeSchemeNotAllowed Code = "scheme-not-allowed"
	// CodeCrossOrigin: the reference points away from the server's dialed
	// origin and from every origin the host allows.
	CodeCrossOrigin Code = "cross-origin"
	// CodeExpired: the reference is expired, or counts as expired.
	CodeExpired Code = "expired"
	// CodeHostCeiling: over the host's own ceiling, which no call raises.
	CodeHostCeiling Code = "host-ceiling"
	// CodeBudgetSpent: the server's fetch budget for this window is used
	// up.
	CodeBudgetSpent Code = "budget-spent"
	// CodeOverBudget: the claim or announcement is more than the budget
	// has left, or the download ran the budget out.
	CodeOverBudget Code = "over-budget"
	// CodeTooLarge: over the call's max bytes.
	CodeTooLarge Code = "too-large"
	// CodeRedirect: the server answered with a redirect, which is never
	// followed.
	CodeRedirect Code = "redirect"
	// CodeStatus: the server answered with a status that carries no
	// payload; [Failure.Status] holds it.
	CodeStatus Code = "status"
	// CodeNoContent: the server answered 204 or 205.
	CodeNoContent Code = "no-content"
	// CodeBadEncoding: a content coding the fetcher cannot decode, or a
	// corrupt gzip stream.
	CodeBadEncoding Code = "bad-encoding"
	// CodeDigestMismatch: the decoded bytes do not match the claimed
	// digest.
	CodeDigestMismatch Code = "digest-mismatch"
	// CodeTimeout: the call's deadline passed. errors.Is also matches
	// context.DeadlineExceeded.
	CodeTimeout Code = "timeout"
	// CodeCanceled: the caller canceled the call. errors.Is also matches
	// context.Canceled.
	CodeCanceled Code = "canceled"
	// CodeNetwork: the request or the response body failed in transit.
	CodeNetwork Code = "network"
	// CodeStorage: the host's [Store] failed or panicked.
	CodeStorage Code = "storage"
	// CodeGone: the registry let the record go, or the reference took a
	// new digest, while it was fetched.
	CodeGone Code = "gone"
)

// Error returns "fetch: <code>", so a Code is itself an error value.
func (c Code) Error() string { return "fetch: " + string(c) }

// codeInfo is what the one table says of a code: the remedy its failures
// carry, unless the clause's constructor says more (a size, a status).
type codeInfo struct {
	remedy Remedy
}

// codes is the taxonomy: every Code, and the remedy that follows from it.
var codes = map[Code]codeInfo{
	CodeInvalidRequest:   {remedy: Remedy{kind: RemedyFixRequest}},
	CodeWithheld:         {remedy: Remedy{kind: RemedyNothing}},
	CodeNoServer:         {remedy: Remedy{kind: RemedyFreshReference}},
	CodeUnknownServer:    {remedy: Remedy{kind: RemedyAskOperator, task: taskAddServer}},
	CodeServerLookup:     {remedy: Remedy{kind: RemedyTryLaterThenAsk, task: taskCheckConnection}},
	CodeNoNetworkAddress: {remedy: Remedy{kind: RemedyNothing}},
	CodeBadURI:           {remedy: Remedy{kind: RemedyNothing}},
	CodeBadServerURI:     {remedy: Remedy{kind: RemedyAskOperator, task: taskCorrectServerAddress}},
	CodeCredentialsInURL: {remedy: Remedy{kind: RemedyNothing}},
	CodeSchemeNotAllowed: {remedy: Remedy{kind: RemedyNothing}},
	CodeCrossOrigin:      {remedy: Remedy{kind: RemedyNothing}},
	CodeExpired:          {remedy: Remedy{kind: RemedyFreshReference}},
	CodeHostCeiling:      {remedy: Remedy{kind: RemedyHostCeiling}},
	CodeBudgetSpent:      {remedy: Remedy{kind: RemedyWaitForBudget, task: taskRenewBudget}},
	CodeOverBudget:       {remedy: Remedy{kind: RemedyWaitForBudget, task: taskRenewBudget}},
	CodeTooLarge:         {remedy: Remedy{kind: RemedyLargerMaxBytes}},
	CodeRedirect:         {remedy: Remedy{kind: RemedyNothing}},
	CodeStatus:           {remedy: Remedy{kind: RemedyFreshReference}},
	CodeNoContent:        {remedy: Remedy{kind: RemedyFreshReference}},
	CodeBadEncoding:      {remedy: Remedy{kind: RemedyNothing}},
	CodeDigestMismatch:   {remedy: Remedy{kind: RemedyTryLaterThenFreshReference}},
	CodeTimeout:          {remedy: Remedy{kind: RemedyTryLater}},
	CodeCanceled:         {remedy: Remedy{kind: RemedyTryLater}},
	CodeNetwork:          {remedy: Remedy{kind: RemedyTryLaterThenAsk, task: taskCheckConnection}},
	CodeStorage:          {remedy: Remedy{kind: RemedyAskOperator, task: taskCheckStorage}},
	CodeGone:             {remedy: Remedy{kind: RemedyFreshReference}},
}

// Failure is the error every failed [Fetcher.Fetch] returns for a
// reference the registry holds. It carries a clause (what happened, as a
// sentence about the reference) and a [Remedy] (what calling again can
// do), both safe to show to a model: neither names an address, a host, a
// port, a credential or any text a server sent, beyond the cleaned and
// bounded name the host knows the server by, in which a uri shows as
// "[uri withheld]". The operator's log line for the failure keeps the
// detail.
type Failure struct {
	// Code names the kind of failure.
	Code Code
	// Clause says what happened, in lower case with no final period, for
	// example "this reference can no longer be fetched: its claimed expiry
	// has passed".
	Clause string
	// Remedy says what calling again can do.
	Remedy Remedy
	// Server names the server the reference came from, "" when none.
	Server string
	// Status is the HTTP status for CodeRedirect, CodeStatus and
	// CodeNoContent, and zero otherwise.
	Status int
	// Limit is the limit that was passed, in bytes, for the size and
	// budget codes, and zero otherwise.
	Limit int64
	// Got is the size that passed Limit: claimed, announced by the
	// response, or actually read before the download stopped. For the
	// budget codes it is the server's spent total where the clause quotes
	// one.
	Got int64

	// detail is the operator-only reason (a store's or a network's own
	// words), logged but never put in the clause.
	detail string
}

// fail builds a failure of kind code with the table's remedy.
func fail(code Code, server, clause string) *Failure {
	return &Failure{Code: code, Clause: clause, Remedy: codes[code].remedy, Server: server}
}

// Error returns the clause prefixed by the package name, for example
// "fetch: this reference can no longer be fetched: its claimed expiry has
// passed".
func (f *Failure) Error() string { return "fetch: " + f.Clause }

// Is reports whether target is the failure's [Code], or the context error
// a timed-out or canceled call also matches.
func (f *Failure) Is(target error) bool {
	switch target {
	case f.Code:
		return true
	case context.DeadlineExceeded:
		return f.Code == CodeTimeout
	case context.Canceled:
		return f.Code == CodeCanceled
	}
	return false
}

// Timeout reports whether the failure is a passed deadline, like
// [net.Error].
func (f *Failure) Timeout() bool { return f.Code == CodeTimeout }

// Sentence composes the failure into the one sentence a host's fetch tool
// returns: "couldn't fetch <id>: <clause>. <remedy>".
func (f *Failure) Sentence(refID string) string {
	return "couldn't fetch " + label.Display(refID, 80) + ": " + f.Clause + ". " + f.Remedy.String()
}
