// Package secagg is the pure core of graphfed's secure aggregation: the
// aggregator learns the sum of a cohort's updates, never one party's.
//
// The protocol is Bonawitz et al. 2017 ("Practical Secure Aggregation for
// Privacy-Preserving Machine Learning") with the sparse neighbour graph of
// Bell et al. 2020 ("Secure Single-Server Aggregation with (Poly)Logarithmic
// Overhead"), the shape Flower calls SecAgg+, with the holes the peers left
// open closed:
//
//   - Every party advertises two X25519 keys (keys.go): an encryption key,
//     to which the other parties seal its Shamir shares, and a mask key,
//     whose Diffie–Hellman secrets seed the pairwise masks. The
//     advertisement is signed by the party's identity (its NKey in the
//     runtime, injected as a [Signer]); an advertisement not signed by the
//     party it lists is refused.
//   - Pairwise mask seeds are HKDF-SHA256 over the X25519 secret, bound to
//     the job, the round and the ordered pair; masks are AES-256-CTR
//     keystreams under the full 256-bit seed (prg.go). No seed is ever
//     folded. A mask is a one-time pad from a PRG: each seed keys one
//     stream of at most 2^26 blocks from a zero counter, so telling the
//     masks from uniform costs breaking AES-256 as a pseudorandom
//     permutation, plus the PRP/PRF switching term q²/2^129 ≤ 2^-77.
//     The issue names ChaCha20, which has the same 256-bit key and no such
//     term; AES-256-CTR is used because x/crypto's ChaCha20 has no amd64
//     assembly (0.55 GB/s on the build machine's EPYC against AES-NI's
//     5.0 GB/s), and masking is the protocol's one cost that grows with
//     d·n. With AES-NI or the ARMv8 AES instructions crypto/aes is
//     constant-time; on a CPU with neither its table-driven fallback can
//     leak the seed through cache timing to a co-resident attacker. The
//     masks of a vector are expanded in parallel (AddMasks: GOMAXPROCS
//     workers over disjoint ranges, the same result for any split).
//     Stochastic rounding reads AES-256-CTR too; ChaCha20 still draws the
//     neighbour graph (a few words a round).
//   - Each party's self-mask seed and mask private key are Shamir-shared
//     t-of-n over GF(2^255 − 19) (shamir.go), each share sealed to its
//     recipient with HPKE and bound to job, round, sender and recipient
//     (seal.go).
//   - Inputs are clipped, scaled and stochastically rounded to integers mod
//     2^b, with b and the scale chosen so that the cohort's sum cannot wrap
//     and a coordinate at the clip keeps 24 bits (b = 29–31 at n ≤ 30); the
//     sample weight travels in the vector (fixedpoint.go). Masked vectors
//     travel packed at b bits a word, so that a party's whole upload in a
//     round stays below its float32 update (messages.go).
//   - The aggregator signs one list of survivors and dropouts; a client
//     refuses a list in which a party is both, refuses a second list that
//     differs from the first, and never reveals both kinds of share for one
//     party and round (client.go). Refusals are counted.
//
// The package does no I/O and holds no package-level mutable state.
// [Client] and [Server] are state machines driven by the caller with
// decoded messages; every random choice reads an injected io.Reader (HPKE's
// ephemeral keys are the exception: crypto/hpke always draws them from the
// system's secure source, since Go 1.26). Wire messages have a canonical
// binary encoding (messages.go) whose decoders refuse anything they would
// not have written.
//
// A round, with the message each step produces:
//
//	client: Advertise                  → SignedAdvertisement (to the server)
//	server: AddAdvertisement…, Keys    → the signed advertisements (to all)
//	client: ReceiveKeys                → SealedShare per neighbour (to each)
//	client: AcceptShare…, MaskInput    → MaskedInput (to the server)
//	server: AddMaskedInput…, CloseInputs → SignedList (to the survivors)
//	client: Unmask                     → Reveal (to the server)
//	server: AddReveal…, Result         → the unmasked sum mod 2^b
//
// Security rests on the threshold. Write h = k + 1 for a party's
// neighbourhood with itself (the whole cohort, n, when n ≤ 30). Against a
// server that follows the protocol and colludes with up to t − 1 parties,
// the view is the sum of the honest survivors' inputs and nothing more
// (Bonawitz et al. 2017, Bell et al. 2020). Against a server that lies —
// shows one list naming party u a survivor to some parties and another
// naming u a dropout to others — each honest party answers only one list,
// so the server gets both t self-mask shares and t mask-key shares of u
// only if it colludes with c ≥ 2t − h of u's neighbours. Config requires
// 2t > h, so the split view alone fails (c = 0); t ≈ 2h/3 tolerates
// colluders up to a third of a neighbourhood. Closing the split view
// against more colluders needs Bonawitz's consistency round (parties sign
// the list and reveal only on t signatures of it), which this package
// does not implement.
//
// Simulate (sim.go) runs the state machines over a simulated network in
// virtual time, seeded and deterministic: delays, reordering, duplicates,
// stragglers, parties crashing at every stage, and a curious server that
// signs a second list; it checks after every delivered message that the
// server never holds both kinds of share of a party, that a sum is
// exactly the survivors' plain sum, that a round without one says
// ErrBelowThreshold, that the list leaves out no input it need not, and
// that no party's input is computable from what the server received.
// sim_test.go sweeps 200 seeds in every test run.
//
// The simulation found a liveness gap, now closed: a party that crashes
// while sending its shares leaves survivors that masked with it, and if
// fewer than t survivors hold its mask key that mask cannot be removed.
// The server used to fail the round (7.5% of the sweep's rounds);
// CloseInputs now leaves out the inputs masked with it (and, to a fixed
// point, those masked with a party so left out, or whose own self mask
// fewer than t survivors hold), lists those parties as dropouts, so that
// only their mask-key shares are asked for and their self masks never,
// and names them in Server.Demoted. The round fails only if fewer than t
// survivors remain.
//
// The server can check what masking leaves checkable: the unmasked sum's
// weight and norm against the cohort's declared bounds
// (Encoding.DecodeSum). A hostile party can still bias the sum anywhere
// within its clip; closing that needs input validation with proofs (for
// example ACORN, Bell et al. 2023).
package secagg
