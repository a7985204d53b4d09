package fetch

import (
	"errors"
	"strconv"

	"github.com/mcplrefs/refcore/label"
)

// Errors a [Fetcher] reports, and two that a [Servers] implementation
// returns. Every failure of [Fetcher.Fetch] is a [*Failure] whose Unwrap
// returns one of these, so callers can test a failure's kind with errors.Is
// and read its details with errors.As. Never match on Error() text.
var (
	// ErrWithheld: a server marked the reference never, and the fetcher was
	// built with a withhold hook (F18).
	ErrWithheld = errors.New("fetch: reference withheld by a never mark")
	// ErrNoServer: no server delivered the reference.
	ErrNoServer = errors.New("fetch: reference bound to no server")
	// ErrUnknownServer: the host no longer has the server the reference
	// came from. A [Servers] implementation returns an error wrapping it.
	ErrUnknownServer = errors.New("fetch: unknown server")
	// ErrServerLookup: the host's [Servers] failed for another reason.
	ErrServerLookup = errors.New("fetch: server lookup failed")
	// ErrNoNetworkAddress: the server is not reached over a network (for
	// example stdio). A [Servers] implementation returns an error wrapping
	// it.
	ErrNoNetworkAddress = errors.New("fetch: server has no network address")
	// ErrBadURI: the reference's address does not parse.
	ErrBadURI = errors.New("fetch: reference address does not parse")
	// ErrBadServerURI: the server's own address does not parse as an
	// http, https, ws or wss URL.
	ErrBadServerURI = errors.New("fetch: server address does not parse")
	// ErrCredentialsInURL: the reference's address carries userinfo.
	ErrCredentialsInURL = errors.New("fetch: credentials in reference address")
	// ErrSchemeNotAllowed: the reference's scheme is not http or https.
	ErrSchemeNotAllowed = errors.New("fetch: scheme not allowed")
	// ErrCrossOrigin: the reference points away from the server's dialed
	// origin.
	ErrCrossOrigin = errors.New("fetch: reference on another origin")
	// ErrExpired: the reference is expired, or counts as expired (E1).
	ErrExpired = errors.New("fetch: reference expired")
	// ErrTooLarge: a claimed, announced or actual size passed the host
	// ceiling or the call's max bytes. [Failure.Code] says which.
	ErrTooLarge = errors.New("fetch: too large")
	// ErrBudget: the server's fetch budget is spent, too small for the
	// claim, or ran out during the download.
	ErrBudget = errors.New("fetch: server budget exhausted")
	// ErrRedirect: the server answered with a redirect, which is never
	// followed.
	ErrRedirect = errors.New("fetch: redirect refused")
	// ErrStatus: the server answered with a status that carries no
	// payload. [Failure.Status] holds it.
	ErrStatus = errors.New("fetch: unexpected status")
	// ErrNoContent: the server answered 204 or 205.
	ErrNoContent = errors.New("fetch: no content")
	// ErrBadEncoding: the response used a content coding the fetcher
	// cannot decode, or its gzip stream was corrupt.
	ErrBadEncoding = errors.New("fetch: bad content encoding")
	// ErrDigestMismatch: the decoded bytes do not match the claimed digest.
	ErrDigestMismatch = errors.New("fetch: digest mismatch")
	// ErrTimeout: the call's deadline passed.
	ErrTimeout = errors.New("fetch: timed out")
	// ErrCanceled: the caller's context was canceled.
	ErrCanceled = errors.New("fetch: canceled")
	// ErrNetwork: the request or the response body failed in transit.
	ErrNetwork = errors.New("fetch: network failure")
	// ErrStorage: the host's [Store] failed or panicked.
	ErrStorage = errors.New("fetch: storage failure")
	// ErrStale: the registry let the record go while it was fetched.
	ErrStale = errors.New("fetch: record no longer held")
)

// Code names one kind of fetch failure. Codes are stable strings, fit for
// logs and metrics. Several codes may share a sentinel: the host ceiling and
// the call's max bytes both unwrap to [ErrTooLarge], for instance.
type Code string

// The failure codes, in the order the fetcher checks them.
const (
	CodeWithheld         Code = "withheld"
	CodeNoServer         Code = "no-server"
	CodeUnknownServer    Code = "unknown-server"
	CodeServerLookup     Code = "server-lookup"
	CodeNoNetworkAddress Code = "no-network-address"
	CodeBadURI           Code = "bad-uri"
	CodeBadServerURI     Code = "bad-server-uri"
	CodeCredentialsInURL Code = "credentials-in-url"
	CodeSchemeNotAllowed Code = "scheme-not-allowed"
	CodeCrossOrigin      Code = "cross-origin"
	CodeExpired          Code = "expired"
	// CodeHostCeiling: over the host's own ceiling, which nothing raises.
	CodeHostCeiling Code = "host-ceiling"
	// CodeBudgetSpent: the server's budget was already used up.
	CodeBudgetSpent Code = "budget-spent"
	// CodeOverBudget: the claim or announcement is more than the budget
	// has left, or the download ran the budget out.
	CodeOverBudget Code = "over-budget"
	// CodeTooLarge: over the call's max bytes.
	CodeTooLarge       Code = "too-large"
	CodeRedirect       Code = "redirect"
	CodeStatus         Code = "status"
	CodeNoContent      Code = "no-content"
	CodeBadEncoding    Code = "bad-encoding"
	CodeDigestMismatch Code = "digest-mismatch"
	CodeTimeout        Code = "timeout"
	CodeCanceled       Code = "canceled"
	CodeNetwork        Code = "network"
	CodeStorage        Code = "storage"
	CodeStale          Code = "stale"
)

// sentinel returns the error a code unwraps to.
func (c Code) sentinel() error {
	switch c {
	case CodeWithheld:
		return ErrWithheld
	case CodeNoServer:
		return ErrNoServer
	case CodeUnknownServer:
		return ErrUnknownServer
	case CodeServerLookup:
		return ErrServerLookup
	case CodeNoNetworkAddress:
		return ErrNoNetworkAddress
	case CodeBadURI:
		return ErrBadURI
	case CodeBadServerURI:
		return ErrBadServerURI
	case CodeCredentialsInURL:
		return ErrCredentialsInURL
	case CodeSchemeNotAllowed:
		return ErrSchemeNotAllowed
	case CodeCrossOrigin:
		return ErrCrossOrigin
	case CodeExpired:
		return ErrExpired
	case CodeHostCeiling, CodeTooLarge:
		return ErrTooLarge
	case CodeBudgetSpent, CodeOverBudget:
		return ErrBudget
	case CodeRedirect:
		return ErrRedirect
	case CodeStatus:
		return ErrStatus
	case CodeNoContent:
		return ErrNoContent
	case CodeBadEncoding:
		return ErrBadEncoding
	case CodeDigestMismatch:
		return ErrDigestMismatch
	case CodeTimeout:
		return ErrTimeout
	case CodeCanceled:
		return ErrCanceled
	case CodeNetwork:
		return ErrNetwork
	case CodeStorage:
		return ErrStorage
	case CodeStale:
		return ErrStale
	}
	return nil
}

// Failure is the error every failed [Fetcher.Fetch] returns, and what
// [Fetcher.Refusal] reports (behaviors F14). It carries a clause (what
// happened, as a sentence about the reference that stays true wherever it
// is read, logs included) and a [Remedy] (what calling again can do).
//
// No field ever holds a credential, a userinfo part or a query string. Use
// errors.Is against the sentinels and the fields below to branch; the text
// of Error is for people.
type Failure struct {
	// Code names the kind of failure.
	Code Code
	// Clause says what happened, in lower case with no final period, for
	// example "the reference is expired: its expiry time has passed".
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
	// response, or actually read (decoded) before the download stopped.
	// For CodeBudgetSpent and CodeOverBudget it is the server's spent
	// total where the clause quotes one.
	Got int64

	// why is the operator-only reason (a store's error), logged but never
	// put in the clause.
	why string
}

// NewFailure returns a failure of kind code with the given clause and
// remedy. The fetcher builds every failure through it, so a failure cannot
// be made without a remedy; hosts may use it for test doubles. It panics on
// a zero Remedy.
func NewFailure(code Code, clause string, remedy Remedy) *Failure {
	if remedy.kind == 0 {
		panic("fetch: a failure needs a remedy")
	}
	return &Failure{Code: code, Clause: clause, Remedy: remedy}
}

// Error returns the clause prefixed by the package name, for example
// "fetch: the reference is expired: its expiry time has passed".
func (f *Failure) Error() string { return "fetch: " + f.Clause }

// Unwrap returns the sentinel for the failure's code, such as
// [ErrTooLarge].
func (f *Failure) Unwrap() error { return f.Code.sentinel() }

// Timeout reports whether the failure is a passed deadline, like
// [net.Error].
func (f *Failure) Timeout() bool { return f.Code == CodeTimeout }

// Sentence composes the failure into one sentence a host's fetch tool can
// return: "couldn't fetch <id>: <clause>. <remedy>".
func (f *Failure) Sentence(refID string) string {
	return "couldn't fetch " + label.Display(refID, 80) + ": " + f.Clause + ". " + f.Remedy.String()
}

// RemedyKind says which remedy a [Remedy] is.
type RemedyKind int

// The remedies a failure can carry.
const (
	// RemedyTryLater: a later call may succeed.
	RemedyTryLater RemedyKind = iota + 1
	// RemedyTryLaterThenAsk: a later call may succeed; if the failure
	// repeats, the host's operator can act ([Remedy.Task]).
	RemedyTryLaterThenAsk
	// RemedyFreshReference: this reference will keep failing; a new one to
	// the same content may not.
	RemedyFreshReference
	// RemedyFreshReferenceThenAsk: as RemedyFreshReference, and if a new
	// reference is refused too, the operator can act ([Remedy.Task]).
	RemedyFreshReferenceThenAsk
	// RemedyTryLaterThenFreshReference: a later call may succeed; if not,
	// a new reference may.
	RemedyTryLaterThenFreshReference
	// RemedyLargerMaxBytes: a call with a larger max bytes, between
	// [Remedy.AtLeast] and [Remedy.UpTo], may succeed.
	RemedyLargerMaxBytes
	// RemedyAskOperator: calling again fails the same way until the host's
	// operator acts ([Remedy.Task]).
	RemedyAskOperator
	// RemedyBudgetTooSmall: a larger max bytes would not help, since the
	// server's budget has only [Remedy.UpTo] bytes left; the operator can
	// raise or renew it.
	RemedyBudgetTooSmall
	// RemedyNothing: calling again will get the same answer.
	RemedyNothing
	// RemedyHostCeiling: the host's own ceiling holds, and no call can
	// raise it.
	RemedyHostCeiling
)

// Task is what the host's operator can do about a failure.
type Task int

// The tasks a remedy may hand to the host's operator.
const (
	// TaskNone: no task.
	TaskNone Task = iota
	// TaskCheckConnection: check the host's network path to the server.
	TaskCheckConnection
	// TaskCheckCredentials: check the credentials held for the server.
	TaskCheckCredentials
	// TaskRenewBudget: raise or renew the server's fetch budget.
	TaskRenewBudget
	// TaskAddServer: add back a server the host no longer has.
	TaskAddServer
	// TaskCorrectServerAddress: correct the server's configured address.
	TaskCorrectServerAddress
	// TaskCheckStorage: look into the store's failure, which the host's
	// log explains.
	TaskCheckStorage
)

// Remedy says what calling again can do about a failure (F14). Its values
// come only from the constructors in this package, such as [TryLater] and
// [PassLargerMaxBytes]; the zero Remedy is not a remedy, and
// [NewFailure] refuses it.
type Remedy struct {
	kind    RemedyKind
	task    Task
	atLeast int64
	upTo    int64
}

// TryLater is the remedy that says a later call may succeed.
func TryLater() Remedy { return Remedy{kind: RemedyTryLater} }

// TryLaterThenAsk is the remedy that says a later call may succeed and,
// if the same failure repeats, the host's operator can do task.
func TryLaterThenAsk(task Task) Remedy { return Remedy{kind: RemedyTryLaterThenAsk, task: task} }

// WaitForFreshReference is the remedy that says this reference will keep
// failing, but a new reference to the same content may be fetchable.
func WaitForFreshReference() Remedy { return Remedy{kind: RemedyFreshReference} }

// WaitForFreshReferenceThenAsk is [WaitForFreshReference], adding that if a
// new reference is refused too, the host's operator can do task.
func WaitForFreshReferenceThenAsk(task Task) Remedy {
	return Remedy{kind: RemedyFreshReferenceThenAsk, task: task}
}

// TryLaterThenWaitForFreshReference is the remedy that says a later call
// may succeed and, if it fails the same way, a new reference to the same
// content may be fetchable.
func TryLaterThenWaitForFreshReference() Remedy {
	return Remedy{kind: RemedyTryLaterThenFreshReference}
}

// PassLargerMaxBytes is the remedy that says a call passing a max bytes of at least atLeast, and
// at most upTo (what the host can still fetch from the server), may succeed.
// An upTo below atLeast is raised to it; use [BudgetTooSmall] when the
// budget cannot cover the payload.
func PassLargerMaxBytes(atLeast, upTo int64) Remedy {
	if upTo < atLeast {
		upTo = atLeast
	}
	return Remedy{kind: RemedyLargerMaxBytes, atLeast: atLeast, upTo: upTo}
}

// AskOperator is the remedy that says calling again will fail the same way until the host's
// operator does task.
func AskOperator(task Task) Remedy { return Remedy{kind: RemedyAskOperator, task: task} }

// BudgetTooSmall is the remedy that says a larger max bytes would not help, since only left bytes
// remain of the server's fetch budget; the host's operator can raise or
// renew it (F15).
func BudgetTooSmall(left int64) Remedy {
	if left < 0 {
		left = 0
	}
	return Remedy{kind: RemedyBudgetTooSmall, task: TaskRenewBudget, upTo: left}
}

// NothingWillChange is the remedy that says calling again will get the
// same answer.
func NothingWillChange() Remedy { return Remedy{kind: RemedyNothing} }

// HostCeilingHolds is the remedy that says the host's own ceiling stopped it, and no max bytes or
// call setting raises that ceiling.
func HostCeilingHolds() Remedy { return Remedy{kind: RemedyHostCeiling} }

// Kind returns which remedy r is; zero for the zero Remedy.
func (r Remedy) Kind() RemedyKind { return r.kind }

// Task returns what the host's operator can do, or TaskNone.
func (r Remedy) Task() Task { return r.task }

// AtLeast returns the smallest max bytes a [PassLargerMaxBytes] remedy
// asks for, and zero for other remedies.
func (r Remedy) AtLeast() int64 { return r.atLeast }

// UpTo returns the largest max bytes worth passing for a
// [PassLargerMaxBytes] remedy, or the bytes the budget has left for a
// [BudgetTooSmall] remedy, and zero for other remedies.
func (r Remedy) UpTo() int64 { return r.upTo }

// String returns the remedy as one or more full sentences, ending with a
// period.
func (r Remedy) String() string {
	switch r.kind {
	case RemedyTryLater:
		return "A later attempt may succeed."
	case RemedyTryLaterThenAsk:
		return "A later attempt may succeed; if the same failure repeats, " + r.task.phrase() + "."
	case RemedyFreshReference:
		return freshReference + "."
	case RemedyFreshReferenceThenAsk:
		return freshReference + ", and if that one is refused as well, " + r.task.phrase() + "."
	case RemedyTryLaterThenFreshReference:
		return "A later attempt may succeed; should it fail in the same way, a new reference to the same content, when one arrives, may be fetchable."
	case RemedyLargerMaxBytes:
		if r.upTo > r.atLeast {
			return "Passing a max bytes of at least " + bytesText(r.atLeast) + ", and at most " + bytesText(r.upTo) + ", may fetch it."
		}
		return "Passing a max bytes of " + bytesText(r.atLeast) + " may fetch it."
	case RemedyAskOperator:
		switch r.task {
		case TaskCheckStorage:
			return "Asking again will probably fail in the same way; " + r.task.phrase() + "."
		case TaskRenewBudget:
			return "The server's fetch budget does not refill by itself, so asking again will get the same answer unless the host's operator raises or renews it."
		case TaskAddServer:
			return "Asking again will get the same answer unless the host's operator adds that server back."
		case TaskCorrectServerAddress:
			return "Asking again will get the same answer unless the host's operator corrects that server's address."
		}
		return "Asking again will get the same answer; " + r.task.phrase() + "."
	case RemedyBudgetTooSmall:
		return "A larger max bytes would not help: only " + remainText(r.upTo) + " of the server's fetch budget, which does not refill by itself, so the host's operator would have to raise or renew it."
	case RemedyNothing:
		return "Asking again will get the same answer."
	case RemedyHostCeiling:
		return "That is the host's own limit, and no max bytes or call setting can raise it, so asking again will get the same answer."
	}
	return "No remedy is known."
}

const freshReference = "This reference will keep failing, but a new reference to the same content, when one arrives, may be fetchable"

// phrase is what the operator can do, as a clause with its subject.
func (t Task) phrase() string {
	switch t {
	case TaskCheckConnection:
		return "the host's operator can look into its network path to that server"
	case TaskCheckCredentials:
		return "the host's operator can check the credentials it holds for that server"
	case TaskRenewBudget:
		return "the host's operator can raise or renew that server's fetch budget"
	case TaskAddServer:
		return "the host's operator can add that server back"
	case TaskCorrectServerAddress:
		return "the host's operator can correct that server's address"
	case TaskCheckStorage:
		return "the host's operator can find the store's reason in the host's log"
	}
	return "the host's operator can look into it"
}

// remainText writes "49 bytes remain" or "1 byte remains".
func remainText(n int64) string {
	if n == 1 {
		return "1 byte remains"
	}
	return bytesText(n) + " remain"
}

// bytesText writes n as "1,048,576 bytes".
func bytesText(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := false
	if n < 0 {
		neg, s = true, s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		out = append([]byte{'-'}, out...)
	}
	if n == 1 {
		return "1 byte"
	}
	return string(out) + " bytes"
}
