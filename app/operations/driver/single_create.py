"""Who may send a create: the rule that keeps one remote job per operation.

`send_create`, the only way a create reaches the provider, takes a `SendPermit`, and
only four things make one:

- `first_send(op)`: the create request's own step, while it still holds the intake
  lease in `create_pending`; nothing can have been sent for the operation before;
- `TokenHonoured.replay(op)`: a provider that honours the idempotency token (and
  got it on the first create too), where a second create starts no second job
  (`announced_replay` writes its history row first, so a replay whose answer is lost
  stays on record);
- `approved_send(ctx, op)`: the first create of an operation an operator approved
  (docs/policy.md); nothing was sent before the approval, and the send is announced in
  history, under the lease, before it goes, so it is made at most once this way;
- `after_nothing_created(ctx, op)`: every create that may have been sent is PROVEN to
  have made no job (it never left, or the provider answered a refusal its profile
  lists as such); the next one is announced in history, under the lease, before it
  is sent, so a process that dies after sending it leaves the doubt on record.

`LookupOnly` and `Blind` have no method that makes a permit, so a resend to a
provider without create idempotency cannot be written: mypy refuses the attribute,
and `SendPermit` refuses to be built outside this module (a private key, checked
at run time). Reconciliation matches on the capability and gets only what its
case allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, final

from app.core.runtime import faults
from app.operations import ledger
from app.operations import repository as repo
from app.operations.context import AppContext
from app.operations.domain.operation import Operation
from app.operations.domain.states import State
from app.operations.driver.step_common import worker_tag
from app.operations.repository import CreateTally, Fence
from app.providers.calls.types import CallResult
from app.providers.language.profile import Profile
from app.providers.language.spec_lookup import LookupEndpoint
from app.providers.language.words import SingleCreate

INTAKE_LEASE_TOKEN = 1  # the lease the create request takes; a higher token means it died

PermitReason = Literal["first_send", "token_replay", "nothing_created", "approved"]
APPROVED_SEND_ROW = "create_approved"  # history kind: the approved create, announced


class SingleCreateBroken(AssertionError):
    """jobgate itself sent a provider without create idempotency more than one create.

    Never a provider's fault and never a state: a bug that must fail tests loudly."""


class _Mint:
    """The private key of `SendPermit`'s constructor."""


_MINT = _Mint()


@final
class SendPermit:
    """Proof that sending this operation's create cannot start a second remote job."""

    __slots__ = ("operation_id", "reason")

    def __init__(self, key: _Mint, operation_id: str, reason: PermitReason) -> None:
        if key is not _MINT:
            raise TypeError("a SendPermit is made only by app.operations.driver.single_create")
        self.operation_id = operation_id
        self.reason = reason


@dataclass(frozen=True)
class TokenHonoured:
    """The provider honours the idempotency token: a replay with it is safe."""

    lookup: LookupEndpoint | None
    guarantee: ClassVar[SingleCreate] = SingleCreate.TOKEN

    def replay(self, op: Operation) -> SendPermit:
        """A replay of the create with the operation's stored token."""
        return SendPermit(_MINT, op.id, "token_replay")

    async def announced_replay(
        self, ctx: AppContext, op: Operation
    ) -> tuple[SendPermit | None, CreateTally]:
        """A replay, announced first (a `create_replay` row with a fenced write), and the
        tally before it: should the process die after sending it, the next holder knows
        a replay's answer may be lost, and settles it by replaying again rather than by a
        lookup alone (docs/single-create.md). None when the lease was lost."""
        now = ctx.now()
        fence = Fence(op.lease_owner or "", op.lease_token)
        async with ctx.db.transaction() as txn:
            tally = await repo.create_tally(txn, op.id)
            fenced = await repo.fenced_update(txn, op.id, fence=fence, at=now, fields={})
            if not fenced:  # the lease was lost: the new holder decides
                return None, tally
            row = ledger.row(
                op,
                kind=repo.REPLAY_ROW,
                actor=f"observer:{ctx.worker_id}",
                cause=f"replay {tally.replays + 1} of the create with the same token announced",
                now=now,
                data={"replay": tally.replays + 1},
            )
            await ledger.write(txn, [row])
        op.updated_at = now  # as written: a holder compares it with the row's (hold.py)
        return self.replay(op), tally


@dataclass(frozen=True)
class LookupOnly:
    """No token: the job is found again by its client reference, never by a resend."""

    lookup: LookupEndpoint
    guarantee: ClassVar[SingleCreate] = SingleCreate.LOOKUP


@dataclass(frozen=True)
class Blind:
    """Neither token nor lookup: an ambiguous create goes to a human at once."""

    guarantee: ClassVar[SingleCreate] = SingleCreate.NONE


Capability = TokenHonoured | LookupOnly | Blind


def capability(profile: Profile, promised: str) -> Capability:
    """What reconciliation may do: the profile's `single_create`, narrowed by the guarantee
    recorded at intake. A create first sent without a token never becomes replayable
    because the profile was changed to send one since."""
    lookup = profile.lookup
    if profile.single_create is SingleCreate.TOKEN and promised == SingleCreate.TOKEN:
        return TokenHonoured(lookup)
    if lookup is not None and lookup.by == "client_reference":
        return LookupOnly(lookup)
    return Blind()


def first_send(op: Operation) -> SendPermit | None:
    """The permit of the very first create: only under the intake lease, before any
    transition. After the create request died (a claim bumped the lease token), the
    create may have been sent, and this answers None."""
    if (
        op.state == State.CREATE_PENDING
        and op.lease_token == INTAKE_LEASE_TOKEN
        and op.version == 0
    ):
        return SendPermit(_MINT, op.id, "first_send")
    return None


async def approved_send(ctx: AppContext, op: Operation) -> SendPermit | None:
    """The permit of the first create after an operator's approval: only in
    `create_pending`, only while the gate's record says approved and no send was
    announced. The announcement (the gate's `sent_at` and a history row, one fenced
    write) comes first: should the process die after sending, the next holder finds it
    and treats the create as possibly sent (reconciliation), never as unsent."""
    gate = op.gate if isinstance(op.gate, dict) else None
    if (
        op.state != State.CREATE_PENDING
        or gate is None
        or gate.get("decision") != "approved"
        or gate.get("sent_at")
    ):
        return None
    now = ctx.now()
    fence = Fence(op.lease_owner or "", op.lease_token)
    announced = {**gate, "sent_at": now.isoformat()}
    async with ctx.db.transaction() as txn:
        fenced = await repo.fenced_update(
            txn,
            op.id,
            fence=fence,
            at=now,
            fields={"gate": announced},
            expect_state=State.CREATE_PENDING,
        )
        if not fenced:  # the lease was lost: the new holder decides
            return None
        row = ledger.row(
            op,
            kind=APPROVED_SEND_ROW,
            actor=f"observer:{ctx.worker_id}",
            cause="approved create announced; sending it now",
            now=now,
            data={"approved_by": gate.get("by")},
        )
        await ledger.write(txn, [row])
    op.gate = announced
    op.updated_at = now
    return SendPermit(_MINT, op.id, "approved")


async def after_nothing_created(
    ctx: AppContext, op: Operation
) -> tuple[SendPermit | None, CreateTally]:
    """The permit of another create, and the tally it was judged on: only in
    `create_pending`, only when every create that may have been sent was proven to make
    no job. The send is announced first (a `create_resend` row with a fenced write, in
    one transaction): should the process die after sending it, the tally no longer adds
    up and the create is ambiguous, never sent blind."""
    if op.state != State.CREATE_PENDING:
        return None, CreateTally()
    now = ctx.now()
    fence = Fence(op.lease_owner or "", op.lease_token)
    async with ctx.db.transaction() as txn:
        tally = await repo.create_tally(txn, op.id)
        if not tally.all_proven:
            return None, tally
        row = ledger.row(
            op,
            kind=repo.RESEND_ROW,
            actor=f"observer:{ctx.worker_id}",
            cause=f"create {tally.resends + 2} announced: every earlier one made no job",
            now=now,
            data={"attempt": tally.resends + 2, "last_proof": tally.last_proof},
        )
        fenced = await repo.fenced_update(
            txn, op.id, fence=fence, at=now, fields={}, expect_state=State.CREATE_PENDING
        )
        if not fenced:  # the lease was lost: the new holder decides
            return None, tally
        await ledger.write(txn, [row])
    op.updated_at = now  # as written: a holder compares it with the row's (hold.py)
    faults.maybe_crash(ctx.settings, "after_create_resend")  # announced, maybe not sent
    return SendPermit(_MINT, op.id, "nothing_created"), tally


async def send_create(
    ctx: AppContext, profile: Profile, op: Operation, permit: SendPermit
) -> CallResult:
    """The create, first or replayed: always the stored token and the operation id."""
    if permit.operation_id != op.id:
        raise ValueError(f"a permit for {permit.operation_id} cannot send {op.id}")
    return await ctx.client.create(
        profile,
        op.kind,
        op.input,
        token=op.provider_token,
        client_reference=op.id,
        trace_id=op.trace_id,
        worker=worker_tag(ctx, op),
    )


def check_single_send(sends: int, op_id: str) -> None:
    """Raise `SingleCreateBroken` if a provider without create idempotency got more than
    one create that may have made a job for this operation (counted from history; one
    proven to have made none does not count)."""
    if sends > 1:
        raise SingleCreateBroken(
            f"{op_id}: jobgate sent {sends} creates to a provider that honours no token"
        )
