package fetch

import "strconv"

// RemedyKind says which remedy a [Remedy] is.
type RemedyKind int

// The remedies a failure can carry.
const (
	// RemedyTryLater: a later call may succeed.
	RemedyTryLater RemedyKind = iota + 1
	// RemedyTryLaterThenAsk: a later call may succeed; if the failure
	// repeats, the host's operator can act (named in the remedy's words).
	RemedyTryLaterThenAsk
	// RemedyFreshReference: this reference will keep failing; a new one to
	// the same content may not.
	RemedyFreshReference
	// RemedyFreshReferenceThenAsk: as RemedyFreshReference, and if a new
	// reference is refused too, the operator can act (named in the remedy's words).
	RemedyFreshReferenceThenAsk
	// RemedyTryLaterThenFreshReference: a later call may succeed; if not,
	// a new reference may.
	RemedyTryLaterThenFreshReference
	// RemedyLargerMaxBytes: a call with a larger max bytes, between
	// [Remedy.AtLeast] and [Remedy.UpTo], may succeed.
	RemedyLargerMaxBytes
	// RemedyAskOperator: calling again fails the same way until the host's
	// operator acts (named in the remedy's words).
	RemedyAskOperator
	// RemedyWaitForBudget: the server's fetch budget renews over time, so
	// a later call may succeed; the operator can also raise it.
	RemedyWaitForBudget
	// RemedyBudgetTooSmall: a larger max bytes would not help, since the
	// server's budget has only [Remedy.UpTo] bytes left in this window.
	RemedyBudgetTooSmall
	// RemedyNothing: calling again will get the same answer.
	RemedyNothing
	// RemedyHostCeiling: the host's own ceiling holds, and no call can
	// raise it.
	RemedyHostCeiling
	// RemedyFixRequest: the call itself was wrong; a call with a max bytes
	// and a timeout of zero (the defaults) or more may succeed.
	RemedyFixRequest
)

// remedyKindNames are the names [RemedyKind.String] gives, by kind.
var remedyKindNames = [...]string{
	0:                                "none",
	RemedyTryLater:                   "try-later",
	RemedyTryLaterThenAsk:            "try-later-then-ask",
	RemedyFreshReference:             "fresh-reference",
	RemedyFreshReferenceThenAsk:      "fresh-reference-then-ask",
	RemedyTryLaterThenFreshReference: "try-later-then-fresh-reference",
	RemedyLargerMaxBytes:             "larger-max-bytes",
	RemedyAskOperator:                "ask-operator",
	RemedyWaitForBudget:              "wait-for-budget",
	RemedyBudgetTooSmall:             "budget-too-small",
	RemedyNothing:                    "nothing",
	RemedyHostCeiling:                "host-ceiling",
	RemedyFixRequest:                 "fix-request",
}

// String returns the kind's name for logs and metrics, such as
// "try-later" for [RemedyTryLater], or "none" for the zero kind of no
// remedy. A value outside the constants reads as "RemedyKind(n)".
func (k RemedyKind) String() string {
	if k >= 0 && int(k) < len(remedyKindNames) {
		return remedyKindNames[k]
	}
	return "RemedyKind(" + strconv.Itoa(int(k)) + ")"
}

// task is what the host's operator can do about a failure; the remedy's
// words name it.
type task int

// The tasks a remedy may hand to the host's operator.
const (
	// taskCheckConnection: check the host's network path to the server.
	// Zero is no task.
	taskCheckConnection task = iota + 1
	// taskCheckCredentials: check the credentials held for the server.
	taskCheckCredentials
	// taskRenewBudget: raise the server's fetch budget.
	taskRenewBudget
	// taskAddServer: add back a server the host no longer has.
	taskAddServer
	// taskCorrectServerAddress: correct the server's configured address.
	taskCorrectServerAddress
	// taskCorrectOtherOrigins: correct the list of other origins the host
	// allows for the server's references.
	taskCorrectOtherOrigins
	// taskCheckStorage: look into the store's failure, which the host's
	// log explains.
	taskCheckStorage
)

// Remedy says what calling again can do about a failure. Its values come
// only from the fetcher; the zero Remedy is no remedy.
type Remedy struct {
	kind    RemedyKind
	task    task
	atLeast int64
	upTo    int64
}

// largerMaxBytes is the remedy for a payload over the call's max bytes:
// pass at least atLeast and at most upTo (what the host can still fetch
// from the server). An upTo below atLeast is raised to it.
func largerMaxBytes(atLeast, upTo int64) Remedy {
	if upTo < atLeast {
		upTo = atLeast
	}
	return Remedy{kind: RemedyLargerMaxBytes, atLeast: atLeast, upTo: upTo}
}

// budgetTooSmall is the remedy when a larger max bytes would not help:
// only left bytes remain of the server's budget in this window.
func budgetTooSmall(left int64) Remedy {
	return Remedy{kind: RemedyBudgetTooSmall, task: taskRenewBudget, upTo: max(left, 0)}
}

// Kind returns which remedy r is; zero for the zero Remedy.
func (r Remedy) Kind() RemedyKind { return r.kind }

// AtLeast returns the smallest max bytes a RemedyLargerMaxBytes remedy
// asks for, and zero for other remedies.
func (r Remedy) AtLeast() int64 { return r.atLeast }

// UpTo returns the largest max bytes worth passing for a
// RemedyLargerMaxBytes remedy, or the bytes the budget has left for a
// RemedyBudgetTooSmall remedy, and zero for other remedies.
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
		case taskAddServer:
			return "Asking again will get the same answer unless the host's operator adds that server back."
		case taskCorrectServerAddress:
			return "Asking again will get the same answer unless the host's operator corrects that server's address."
		case taskCorrectOtherOrigins:
			return "Asking again will get the same answer unless the host's operator corrects its list of other origins for that server."
		}
		return "Asking again will probably fail in the same way; " + r.task.phrase() + "."
	case RemedyWaitForBudget:
		return "The server's fetch budget renews over time, so a later attempt may succeed; " + r.task.phrase() + " sooner."
	case RemedyBudgetTooSmall:
		return "A larger max bytes would not help now: only " + remainText(r.upTo) + " of the server's fetch budget until it renews, and " + r.task.phrase() + "."
	case RemedyNothing:
		return "Asking again will get the same answer."
	case RemedyHostCeiling:
		return "That is the host's own limit, and no max bytes or call setting can raise it, so asking again will get the same answer."
	case RemedyFixRequest:
		return "Asking again with a max bytes and a timeout of zero (the defaults) or more may succeed."
	}
	return "No remedy is known."
}

const freshReference = "This reference will keep failing, but a new reference to the same content, when one arrives, may be fetchable"

// phrase is what the operator can do, as a clause with its subject.
func (t task) phrase() string {
	switch t {
	case taskCheckConnection:
		return "the host's operator can look into its network path to that server"
	case taskCheckCredentials:
		return "the host's operator can check the credentials it holds for that server"
	case taskRenewBudget:
		return "the host's operator can raise that server's fetch budget"
	case taskAddServer:
		return "the host's operator can add that server back"
	case taskCorrectServerAddress:
		return "the host's operator can correct that server's address"
	case taskCorrectOtherOrigins:
		return "the host's operator can correct its list of other origins for that server"
	case taskCheckStorage:
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
	if n == 1 {
		return "1 byte"
	}
	s := strconv.FormatInt(n, 10)
	neg := false
	if n < 0 {
		neg, s = true, s[1:]
	}
	var out []byte
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out) + " bytes"
}
