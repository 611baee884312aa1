/// The chaos's random choices from a seed (SplitMix64), so that `tandem stress --seed N` replays
/// the same choices (the processes' timing still varies from run to run).
///
/// Related documentation: https://prng.di.unimi.it/splitmix64.c
package struct StressRandom: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
