extension Array {
    /// The first index whose element is not `belongs` (the elements that are come first).
    func partitionPoint(_ belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
