//! Reads a vocabulary in the compact form build.rs writes, through the `Deserialize` that `bpe`
//! derives for its `BytePairEncoding`.
//!
//! The form is bincode-like and not self-describing: the reader is told each value's type by
//! the derived code and reads it from fixed-width little-endian bytes. A sequence or map is a
//! `u32` count then its items; a byte string a `u32` length then the bytes (borrowed); a struct
//! or tuple its fields in order; `u8`, `u32`, `u64` are 1, 4, 8 bytes. MessagePack, which
//! `bpe-openai` uses, tags and dispatches every one of the vocabulary's million integers; this
//! reads them at memory speed, which is most of what a cold count waits for.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// A compact vocabulary that ends early or asks for a type the form does not carry.
#[derive(Debug)]
pub(super) struct Malformed(String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed compact vocabulary: {}", self.0)
    }
}

impl std::error::Error for Malformed {}

impl de::Error for Malformed {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Malformed(message.to_string())
    }
}

/// The unread rest of a compact vocabulary.
pub(super) struct Reader<'de> {
    rest: &'de [u8],
}

impl<'de> Reader<'de> {
    /// A reader at the start of `bytes`.
    pub(super) fn new(bytes: &'de [u8]) -> Self {
        Reader { rest: bytes }
    }

    /// Whether every byte was read: a vocabulary with bytes left over was not the one expected.
    pub(super) fn is_done(&self) -> bool {
        self.rest.is_empty()
    }

    fn take(&mut self, n: usize) -> Result<&'de [u8], Malformed> {
        if self.rest.len() < n {
            return Err(Malformed(format!(
                "{n} bytes wanted, {} left",
                self.rest.len()
            )));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn count(&mut self) -> Result<usize, Malformed> {
        Ok(u32::from_le_bytes(self.fixed()?) as usize)
    }
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Malformed;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Malformed> {
        Err(Malformed(
            "a value of a type the form does not carry".into(),
        ))
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        visitor.visit_u8(self.fixed::<1>()?[0])
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        visitor.visit_u32(u32::from_le_bytes(self.fixed()?))
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        visitor.visit_u64(u64::from_le_bytes(self.fixed()?))
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        let len = self.count()?;
        visitor.visit_borrowed_bytes(self.take(len)?)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        let left = self.count()?;
        visitor.visit_seq(Items { reader: self, left })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Malformed> {
        let left = self.count()?;
        visitor.visit_map(Items { reader: self, left })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Malformed> {
        visitor.visit_seq(Items {
            reader: self,
            left: len,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Malformed> {
        self.deserialize_tuple(fields.len(), visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u16 u128 f32 f64 char str string option unit unit_struct
        newtype_struct tuple_struct enum identifier ignored_any
    }
}

/// The next `left` items of a sequence, map, tuple or struct.
struct Items<'r, 'de> {
    reader: &'r mut Reader<'de>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Items<'_, 'de> {
    type Error = Malformed;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Malformed> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> MapAccess<'de> for Items<'_, 'de> {
    type Error = Malformed;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Malformed> {
        self.next_element_seed(seed)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Malformed> {
        seed.deserialize(&mut *self.reader)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Sample {
        small: Vec<u8>,
        pairs: Vec<(u32, u32)>,
        map: HashMap<(u32, u32), u32>,
        factor: u64,
    }

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn reads_what_the_form_describes() {
        let mut bytes = le(&[2]);
        bytes.extend([7, 9]);
        bytes.extend(le(&[1, 3, 4, 1, 5, 6, 60]));
        bytes.extend(99u64.to_le_bytes());
        let mut reader = Reader::new(&bytes);
        let sample = Sample::deserialize(&mut reader).unwrap();
        assert!(reader.is_done());
        assert_eq!(
            sample,
            Sample {
                small: vec![7, 9],
                pairs: vec![(3, 4)],
                map: HashMap::from([((5, 6), 60)]),
                factor: 99,
            }
        );
    }

    #[test]
    fn a_short_vocabulary_is_an_error() {
        let bytes = le(&[5, 1]);
        let error = Vec::<u32>::deserialize(&mut Reader::new(&bytes)).unwrap_err();
        assert!(
            error.to_string().contains("4 bytes wanted, 0 left"),
            "{error}"
        );
    }
}
