import ArgumentParser
import Foundation

/// `--body TEXT` or `--body-file FILE` (`-` for stdin): an announcement's HTML body.
struct BodyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The body, as HTML.", valueName: "text"))
    var body: String?

    @Option(name: .customLong("body-file"), help: ArgumentHelp("Read the body from a file, or from stdin with -.", valueName: "file"))
    var bodyFile: String?

    func validate() throws {
        if body != nil, bodyFile != nil { throw ValidationError("Use --body or --body-file, not both.") }
    }

    /// The body given, if any.
    func text() throws(CLIError) -> String? {
        if let body { return body }
        guard let bodyFile else { return nil }
        let data: Data?
        if bodyFile == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = FileManager.default.contents(atPath: bodyFile)
        }
        guard let data else {
            var isFolder: ObjCBool = false
            let reason = switch FileManager.default.fileExists(atPath: bodyFile, isDirectory: &isFolder) {
            case false: "no such file"
            case true where isFolder.boolValue: "it is a folder"
            case true: "it cannot be read (check its permissions)"
            }
            throw CLIError(.noInput, "\(bodyFile): cannot read the body file: \(reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.dataError, "\(bodyFile == "-" ? "stdin" : bodyFile): the body is not UTF-8 text")
        }
        return text
    }
}
