//! The values a field (a CSV column, a JSON key, a log template's k-th number) takes across
//! sibling records, for rarity and extremes.

/// The values one field (a CSV column, a JSON key) takes across sibling records.
///
/// Stored column-wise, 8 to 12 bytes a value: a table has many more values than rows, and a
/// `(usize, FieldValue)` pair took 24. The records of a table's column, or of an array's key,
/// follow one another, so their indices are only stored once they do not.
#[derive(Debug, Default, Clone)]
pub(crate) struct Field {
    /// The record (unit) of each value, in the order they were pushed; empty while those are
    /// consecutive from `first_unit`.
    units: Vec<u32>,
    /// The record of the first value, while the records are consecutive.
    first_unit: u32,
    /// Each value's `f64` bits or category hash.
    bits: Vec<u64>,
    /// One bit a value: whether it is a number.
    numbers: Vec<u64>,
    /// What the records call the field (a CSV column's header, a JSON key), when they do: a
    /// query may name it.
    name: Box<str>,
}

impl Field {
    /// A field with room for `n` values: a table's column knows its length beforehand, and a
    /// doubling vector would hold up to twice that.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Field {
            bits: Vec::with_capacity(n),
            numbers: Vec::with_capacity(n.div_ceil(64)),
            ..Field::default()
        }
    }

    /// The field named `name` (a column's header, a key), for a query to name.
    pub(crate) fn with_name(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }

    /// What the records call the field; empty when unnamed.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Adds `value` of record `unit`.
    pub(crate) fn push(&mut self, unit: usize, value: FieldValue) {
        let i = self.len();
        let unit = unit_index(unit);
        if i == 0 {
            self.first_unit = unit;
        } else if !self.units.is_empty() {
            self.units.push(unit);
        } else if unit != self.first_unit.wrapping_add(i as u32) {
            // The first gap: from here on every record is stored.
            self.units.reserve_exact(self.bits.capacity().max(i + 1));
            self.units
                .extend((0..i as u32).map(|k| self.first_unit + k));
            self.units.push(unit);
        }
        if i.is_multiple_of(64) {
            self.numbers.push(0);
        }
        let bits = match value {
            FieldValue::Number(x) => {
                self.numbers[i / 64] |= 1 << (i % 64);
                x.to_bits()
            }
            FieldValue::Category(h) => h,
        };
        self.bits.push(bits);
    }

    /// How many records have the field.
    pub(crate) fn len(&self) -> usize {
        self.bits.len()
    }

    fn unit(&self, i: usize) -> usize {
        if self.units.is_empty() {
            self.first_unit as usize + i
        } else {
            self.units[i] as usize
        }
    }

    /// Value `i`: its record and the value.
    fn get(&self, i: usize) -> (usize, FieldValue) {
        let value = if self.numbers[i / 64] >> (i % 64) & 1 == 1 {
            FieldValue::Number(f64::from_bits(self.bits[i]))
        } else {
            FieldValue::Category(self.bits[i])
        };
        (self.unit(i), value)
    }

    /// `(record, value)` pairs in the order they were pushed.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, FieldValue)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The values of the records `keep` accepts, as a field of its own.
    pub(crate) fn filtered(&self, mut keep: impl FnMut(usize) -> bool) -> Field {
        let mut subset = Field::default();
        for (unit, value) in self.iter().filter(|&(u, _)| keep(u)) {
            subset.push(unit, value);
        }
        subset
    }

    /// Renumbers the records after units were split: record `u` becomes `new_index[u]`.
    pub(crate) fn renumber(&mut self, new_index: &[usize]) {
        let mut renumbered = Field::with_capacity(self.len()).with_name(&self.name);
        for (unit, value) in self.iter() {
            renumbered.push(new_index[unit], value);
        }
        *self = renumbered;
    }

    /// Drops every value.
    pub(crate) fn clear(&mut self) {
        *self = Field::default();
    }

    /// Gives back the room reserved for more values.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.units.shrink_to_fit();
        self.bits.shrink_to_fit();
        self.numbers.shrink_to_fit();
    }
}

/// A unit's index as stored in a field.
fn unit_index(unit: usize) -> u32 {
    super::doc::offset(unit)
}

/// A field's value, as rarity and extremes need it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FieldValue {
    Number(f64),
    /// A hash of a short text value.
    Category(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_gives_back_what_it_was_given_records_consecutive_or_not() {
        let values = [
            (3, FieldValue::Number(1.5)),
            (4, FieldValue::Category(7)),
            (5, FieldValue::Number(-2.0)),
            (9, FieldValue::Category(0)),
            (10, FieldValue::Number(0.0)),
        ];
        let mut field = Field::with_capacity(2);
        for (unit, value) in values {
            field.push(unit, value);
        }
        assert_eq!(field.iter().collect::<Vec<_>>(), values);
        // The consecutive start is stored without its records.
        let mut consecutive = Field::default();
        for &(unit, value) in &values[..3] {
            consecutive.push(unit, value);
        }
        assert!(consecutive.units.is_empty());
        assert_eq!(consecutive.iter().collect::<Vec<_>>(), values[..3]);
        let shifted: Vec<usize> = (0..12).map(|u| u * 2).collect();
        field.renumber(&shifted);
        let units: Vec<usize> = field.iter().map(|(u, _)| u).collect();
        assert_eq!(units, [6, 8, 10, 18, 20]);
        let odd = field.filtered(|u| u % 4 == 2);
        assert_eq!(odd.iter().map(|(u, _)| u).collect::<Vec<_>>(), [6, 10, 18]);
    }
}
