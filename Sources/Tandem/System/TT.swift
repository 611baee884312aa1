import Foundation
public let ttOn = ProcessInfo.processInfo.environment["TANDEM_TT"] != nil
public func tt(_ label: String) {
    guard ttOn else { return }
    var ts = timespec(); clock_gettime(CLOCK_REALTIME, &ts)
    let ms = Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    FileHandle.standardError.write("TT \(String(format: "%.1f", ms)) \(getpid()) \(label)\n".data(using: .utf8)!)
}
